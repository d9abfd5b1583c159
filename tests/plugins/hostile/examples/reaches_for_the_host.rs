//! Tries the machine directly, past the contract: its environment, then its files. Says what
//! each attempt got; the sandbox stops it at the first file it opens.

use mesh_adopt_sdk::Report;

hostile::adopt_only!(|ctx| {
    use mesh_adopt_sdk::host::say;
    say(&format!("env: {} variables, {} arguments", std::env::vars().count(), std::env::args().count()));
    say(&format!("file: {:?}", std::fs::read_to_string("/etc/passwd").map(|s| s.len())));
    say(&format!("dir: {:?}", std::fs::read_dir(".").map(|d| d.count())));
    Ok(Report { summary: "looked around".into() })
});
