//! Prints the event stream's JSON Schema, generated from the types that write it:
//! `cargo run -q -p mesh-adopt-runtime --example events-schema > docs/events.schema.json`
//! (what `just schema` does).

fn main() {
    let schema = mesh_adopt_runtime::events::json_schema();
    println!("{}", serde_json::to_string_pretty(&schema).expect("a JSON Schema serialises"));
}
