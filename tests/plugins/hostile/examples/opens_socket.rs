//! Opens a TCP connection through WASI's sockets, then says what it got.

hostile::adopt_only!(|ctx| {
    let got = std::net::TcpStream::connect("127.0.0.1:22");
    mesh_adopt_sdk::host::say(&format!("connect: {:?}", got.map(|_| ())));
    Ok(mesh_adopt_sdk::Report { summary: "opened a socket".into() })
});
