//! Printing that never fails a command: once files are written, a closed or full stdout
//! (`opbuilder … | true`, `> /dev/full`) or stderr must not turn a success into a failure or a
//! panic. `println!` panics on such errors; these macros drop them.

/// Like `println!`, ignoring write errors.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Like `eprintln!`, ignoring write errors.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub(crate) use errln;
pub(crate) use outln;
