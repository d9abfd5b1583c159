//! Spins forever in `adopt`; the guest-time deadline must stop it.

hostile::adopt_only!(|ctx| {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
});
