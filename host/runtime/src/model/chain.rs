//! An error and every cause after it in one line, each after a colon: how a message of one
//! line says a typed error whose causes are errors of their own.

/// `error`'s text, then each of its causes' ([`std::error::Error::source`]), after ": ".
pub fn chain_text(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}
