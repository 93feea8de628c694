//! The terminal: yes/no questions read a line at a time from the terminal itself, and
//! cargo-style colour for status lines. No crate: the ANSI codes are written here.

use anyhow::{bail, Result};
use std::fs::OpenOptions;
use std::io::{BufRead, IsTerminal, Read, Write};

/// A text style for status words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Green,
    Cyan,
    Yellow,
    Red,
    Dim,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Style::Green => "1;32",
            Style::Cyan => "1;36",
            Style::Yellow => "1;33",
            Style::Red => "1;31",
            Style::Dim => "2",
        }
    }
}

/// Whether colour is wanted for a stream that is (or is not) a terminal: never with
/// `NO_COLOR` set to a non-empty value (no-color.org) or with `TERM=dumb`.
pub fn color_wanted(is_terminal: bool) -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
    is_terminal && !no_color && !dumb
}

/// Colour for standard output.
pub fn color_stdout() -> bool {
    color_wanted(std::io::stdout().is_terminal())
}

/// Colour for standard error.
pub fn color_stderr() -> bool {
    color_wanted(std::io::stderr().is_terminal())
}

/// `text` in `style` when `on`, else as it is.
pub fn paint(text: &str, style: Style, on: bool) -> String {
    if on {
        format!("\x1b[{}m{text}\x1b[0m", style.code())
    } else {
        text.to_string()
    }
}

/// A `warning:`/`note:`/`error:` prefix for standard error, coloured on a terminal.
pub fn label(word: &str) -> String {
    let style = match word {
        "error" => Style::Red,
        "warning" => Style::Yellow,
        _ => Style::Cyan,
    };
    paint(&format!("{word}:"), style, color_stderr())
}

/// The answer a line stands for: `Some(Some(b))` for y/yes/n/no, `Some(None)` for an empty
/// line (take the default), `None` for anything else (ask again). Case-insensitive.
pub fn parse_answer(line: &str) -> Option<Option<bool>> {
    match line.trim().to_ascii_lowercase().as_str() {
        "" => Some(None),
        "y" | "yes" => Some(Some(true)),
        "n" | "no" => Some(Some(false)),
        _ => None,
    }
}

/// Read one line, a byte at a time so nothing after the newline is consumed.
/// `None` at end of input with nothing read.
fn read_line(input: &mut impl Read) -> Result<Option<String>> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match input.read(&mut byte) {
            Ok(0) => break,
            Ok(_) if byte[0] == b'\n' => return Ok(Some(lossy(&buf))),
            Ok(_) => buf.push(byte[0]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok((!buf.is_empty()).then(|| lossy(&buf)))
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b)
        .trim_end_matches('\r')
        .to_string()
}

/// Ask `question` until the answer is y, yes, n, no or empty (the default). `None` at end
/// of input.
pub fn ask(
    input: &mut impl Read,
    output: &mut impl Write,
    question: &str,
    default: bool,
) -> Result<Option<bool>> {
    let choices = if default { "[Y/n]" } else { "[y/N]" };
    loop {
        // One write, so the whole question is on the screen before anything is read.
        output.write_all(format!("{question}? {choices} ").as_bytes())?;
        output.flush()?;
        let Some(line) = read_line(input)? else {
            writeln!(output)?;
            return Ok(None);
        };
        match parse_answer(&line) {
            Some(answer) => return Ok(Some(answer.unwrap_or(default))),
            None => writeln!(
                output,
                "  {:?} is not an answer: type y or yes, n or no, or press Enter for the default ({})",
                line.trim(),
                if default { "yes" } else { "no" }
            )?,
        }
    }
}

/// Ask a yes/no question for `flag` on the terminal (`/dev/tty`), so that it works when
/// standard output or error are redirected. Call it only when standard input is a terminal.
pub fn confirm(question: &str, flag: &str, default: bool) -> Result<bool> {
    let answer = match OpenOptions::new().read(true).write(true).open("/dev/tty") {
        Ok(tty) => {
            let mut out = &tty;
            ask(&mut &tty, &mut out, question, default)?
        }
        // No controlling terminal (stdin is a terminal all the same): stdin and stderr.
        Err(_) => {
            let stdin = std::io::stdin();
            let mut input = StdinLines(stdin.lock());
            ask(&mut input, &mut std::io::stderr(), question, default)?
        }
    };
    match answer {
        Some(a) => Ok(a),
        None => bail!(
            "no answer to \"{question}\" (end of input); nothing was written. \
             Pass {flag}=true or {flag}=false to decide without a question"
        ),
    }
}

/// Standard input read through its buffer (nothing else reads it).
struct StdinLines<'a>(std::io::StdinLock<'a>);

impl Read for StdinLines<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let avail = self.0.fill_buf()?;
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        self.0.consume(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_whole_words_case_insensitive() {
        for (line, want) in [
            ("y", Some(Some(true))),
            ("YES", Some(Some(true))),
            (" No ", Some(Some(false))),
            ("n", Some(Some(false))),
            ("", Some(None)),
            ("maybe", None),
            ("yeah", None),
            ("ny", None),
        ] {
            assert_eq!(parse_answer(line), want, "{line:?}");
        }
    }

    #[test]
    fn ask_re_asks_until_valid_and_reads_one_line_per_question() {
        let mut input: &[u8] = b"maybe\r\nN\nyes\n";
        let mut out = Vec::new();
        assert_eq!(
            ask(&mut input, &mut out, "Create Resource", true).unwrap(),
            Some(false)
        );
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("Create Resource? [Y/n] ").count(), 2, "{text}");
        assert!(text.contains("\"maybe\" is not an answer"), "{text}");
        // The next line is left for the next question.
        assert_eq!(input, b"yes\n");
        let mut out = Vec::new();
        assert_eq!(
            ask(&mut input, &mut out, "Create Controller", false).unwrap(),
            Some(true)
        );
        assert_eq!(String::from_utf8(out).unwrap(), "Create Controller? [y/N] ");
        let mut out = Vec::new();
        assert_eq!(ask(&mut input, &mut out, "Again", true).unwrap(), None);
        let mut input: &[u8] = b"\n";
        assert_eq!(
            ask(&mut input, &mut out, "Default", true).unwrap(),
            Some(true)
        );
    }

    #[test]
    fn paint_only_when_on() {
        assert_eq!(paint("create", Style::Green, false), "create");
        assert_eq!(
            paint("create", Style::Green, true),
            "\x1b[1;32mcreate\x1b[0m"
        );
    }
}
