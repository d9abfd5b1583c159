//! A plugin built against `mesh:adopt@0.3.0`, a contract version this host does not know.

wit_bindgen::generate!({ path: "wit/future-world", world: "adopter" });

struct Future;

impl Guest for Future {
    fn adopt() -> String {
        mesh::adopt::log::say("adopting by a contract from the future");
        "adopted".into()
    }
}

export!(Future);
