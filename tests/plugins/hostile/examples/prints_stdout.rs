//! Prints to its standard output and error, then panics: both show in the stop report.

hostile::adopt_only!(|ctx| {
    println!("hello from stdout: adopting {}", ctx.module);
    eprintln!("hello from stderr");
    panic!("printed and gave up");
});
