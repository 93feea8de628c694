//! Error kinds that decide the exit code: usage errors exit 2, an interruption 130,
//! everything else 1.

use std::fmt;

/// Bad input on the command line (a flag value breaks a rule). Exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The user interrupted the command (Ctrl-C) after it had written its files. Exit code 130,
/// as a shell reports a command ended by SIGINT.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// Build a usage error for `flag` with `value`, stating the `rule` and a good `example`.
pub fn bad_flag(flag: &str, value: &str, rule: &str, example: &str) -> anyhow::Error {
    anyhow::Error::new(UsageError(format!(
        "invalid value {value:?} for {flag}: {rule}\n  example of a valid value: {flag} {example}"
    )))
}

/// A usage error with a free-form message.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// The exit code for an error chain.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    if err.chain().any(|e| e.is::<Interrupted>()) {
        130
    } else if err.chain().any(|e| e.is::<UsageError>())
        || err.chain().any(|e| e.is::<clap::Error>())
    {
        2
    } else {
        1
    }
}
