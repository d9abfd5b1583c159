//! Tries the machine directly, past the contract: its files, its environment, its network. Says what each attempt got.

use mesh_adopt_sdk::Report;

hostile_kit::adopt_only!(|ctx| {
    use mesh_adopt_sdk::host::say;
    say(&format!("file: {:?}", std::fs::read_to_string("/etc/passwd").map(|s| s.len())));
    say(&format!("dir: {:?}", std::fs::read_dir(".").map(|d| d.count())));
    say(&format!("env: {}", std::env::vars().count()));
    say(&format!("net: {:?}", std::net::TcpStream::connect("127.0.0.1:22").map(|_| ())));
    Ok(Report { summary: "looked around".into() })
});
