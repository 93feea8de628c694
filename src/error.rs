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

/// A usage error for `flag` with `value`, stating the `rule`; then the value the user most
/// likely `meant` (derived from `value`, see `validate::meant`), else a good `example`.
pub fn bad_flag_meant(
    flag: &str,
    value: &str,
    rule: &str,
    meant: Option<String>,
    example: &str,
) -> anyhow::Error {
    match meant {
        Some(m) => anyhow::Error::new(UsageError(format!(
            "invalid value {value:?} for {flag}: {rule}\n  did you mean {flag} {m}?"
        ))),
        None => bad_flag(flag, value, rule, example),
    }
}

/// Check `value` of `flag` against `rule`; on failure, the usage error of [`bad_flag_meant`]
/// with what `meant` derives from the value.
pub fn check_flag(
    flag: &str,
    value: &str,
    rule: fn(&str) -> Result<(), String>,
    meant: fn(&str) -> Option<String>,
    example: &str,
) -> anyhow::Result<()> {
    rule(value).map_err(|r| bad_flag_meant(flag, value, &r, meant(value), example))
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
