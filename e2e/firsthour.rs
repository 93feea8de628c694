//! A new user's first hour (issue 12): questions on a real terminal, running from a
//! subdirectory, pasteable help examples, honest hints, interrupted post-steps, colour.
//!
//! The terminal tests drive opbuilder on a pseudo-terminal with e2e/support/pty_drive.py
//! (python3 and its standard `pty` module).

use crate::support::{
    full_snapshot, init_project, opbuilder, text, SOURCE_DATE_EPOCH, TEST_VERSION,
};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn project_file(dir: &Path) -> String {
    fs::read_to_string(dir.join("PROJECT")).unwrap()
}

/// What a pseudo-terminal run showed.
struct Tty {
    code: i32,
    /// Everything written to the terminal (including the echo of what was typed).
    screen: String,
    /// What went down the pipe with `stdout: Pipe`.
    piped: String,
    /// The file stderr went to with `stderr: File`.
    err_file: String,
}

#[derive(Default)]
struct TtyOpts<'a> {
    pipe_stdout: bool,
    stderr_to_file: bool,
    env: Vec<(&'a str, String)>,
    cwd: Option<PathBuf>,
}

/// Run opbuilder `args` in `dir` on a new pseudo-terminal, performing `steps`
/// (`expect:TEXT` / `send:TEXT`, see pty_drive.py).
fn on_tty(dir: &Path, steps: &[&str], args: &[&str], o: TtyOpts) -> Tty {
    let io = tempfile::tempdir().unwrap();
    let screen = io.path().join("screen");
    let piped = io.path().join("stdout");
    let err = io.path().join("stderr");
    let mut cmd = Command::new("python3");
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/e2e/support/pty_drive.py"
    ))
    .arg("--transcript")
    .arg(&screen);
    if o.pipe_stdout {
        cmd.arg("--stdout-pipe").arg(&piped);
    }
    if o.stderr_to_file {
        cmd.arg("--stderr").arg(&err);
    }
    cmd.args(steps)
        .arg("--")
        .arg(assert_cmd::cargo::cargo_bin("opbuilder"))
        .args(args)
        .current_dir(o.cwd.as_deref().unwrap_or(dir))
        .env("OPBUILDER_TEST_VERSION", TEST_VERSION)
        .env("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .env_remove("GOFLAGS");
    for (k, v) in &o.env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("python3 runs (the pty tests need it)");
    let read = |p: &Path| fs::read(p).map(|b| text(&b)).unwrap_or_default();
    let t = Tty {
        code: out.status.code().unwrap_or(-1),
        screen: read(&screen),
        piped: read(&piped),
        err_file: read(&err),
    };
    assert_ne!(
        t.code,
        99,
        "an expected text never appeared\n{}\nscreen:\n{}",
        text(&out.stderr),
        t.screen
    );
    t
}

const API: [&str; 9] = [
    "create",
    "api",
    "--group",
    "ship",
    "--version",
    "v1",
    "--kind",
    "Frigate",
    "--skip-post-steps",
];
// Each question is expected in two steps, its words and then its default, so that the
// whole question is on the screen before the answer is typed.
const RESOURCE_Q: &str = "expect:Create Resource";
const CONTROLLER_Q: &str = "expect:Create Controller";
const CHOICES: &str = "expect:[Y/n] ";

fn has_types(dir: &Path) -> bool {
    dir.join("api/v1/frigate_types.go").exists()
}

fn has_controller(dir: &Path) -> bool {
    dir.join("internal/controller/frigate_controller.go")
        .exists()
}

#[test]
fn prompt_reads_a_whole_line_per_question() {
    // `n` Enter, then `y` Enter: each answers its own question.
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let r = on_tty(
        d,
        &[
            RESOURCE_Q,
            CHOICES,
            "send:n\r",
            CONTROLLER_Q,
            CHOICES,
            "send:y\r",
        ],
        &API,
        TtyOpts::default(),
    );
    assert_eq!(r.code, 0, "{}", r.screen);
    assert!(!has_types(d) && has_controller(d), "{}", r.screen);
    assert!(project_file(d).contains("controller: true"));
    // Each question once, with its default, and the line typed.
    assert_eq!(
        r.screen.matches("Create Resource? [Y/n] n\r\n").count(),
        1,
        "{:?}",
        r.screen
    );
    assert_eq!(
        r.screen.matches("Create Controller? [Y/n] y\r\n").count(),
        1,
        "{:?}",
        r.screen
    );

    // `y` Enter, then `n` Enter. One keypress per question would have taken the Enter after
    // `y` as "yes" to the controller.
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let r = on_tty(
        d,
        &[
            RESOURCE_Q,
            CHOICES,
            "send:y\r",
            CONTROLLER_Q,
            CHOICES,
            "send:n\r",
        ],
        &API,
        TtyOpts::default(),
    );
    assert_eq!(r.code, 0, "{}", r.screen);
    assert!(has_types(d) && !has_controller(d), "{}", r.screen);
}

#[test]
fn prompt_re_asks_on_anything_else_with_stderr_in_a_file() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let r = on_tty(
        d,
        &[
            RESOURCE_Q,
            CHOICES,
            "send:maybe\r",
            "expect:\"maybe\" is not an answer",
            RESOURCE_Q,
            CHOICES,
            "send:\r", // Enter alone: the default shown, yes
            CONTROLLER_Q,
            CHOICES,
            "send:NO\r",
        ],
        &API,
        TtyOpts {
            stderr_to_file: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, 0, "{}\nstderr: {}", r.screen, r.err_file);
    assert!(has_types(d) && !has_controller(d), "{}", r.screen);
    // The questions went to the terminal, not into the redirected stderr.
    assert!(!r.err_file.contains("Create"), "{}", r.err_file);
    assert!(!r.err_file.contains("not a terminal"), "{}", r.err_file);
}

#[test]
fn prompt_on_the_terminal_when_stdout_is_piped() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let r = on_tty(
        d,
        &[
            RESOURCE_Q,
            CHOICES,
            "send:y\r",
            CONTROLLER_Q,
            CHOICES,
            "send:n\r",
        ],
        &API,
        TtyOpts {
            pipe_stdout: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, 0, "{}", r.screen);
    assert!(has_types(d) && !has_controller(d), "{}", r.screen);
    assert!(
        !r.screen.contains("stdin is not a terminal"),
        "{}",
        r.screen
    );
    // The report went down the pipe, plain; the questions stayed on the terminal.
    assert!(
        r.piped.contains("Scaffolded ship/v1 Frigate"),
        "{}",
        r.piped
    );
    assert!(!r.piped.contains("Create Resource"), "{}", r.piped);
    assert!(!r.piped.contains('\x1b'), "{:?}", r.piped);
}

#[test]
fn ctrl_c_or_end_of_input_at_a_question_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let before = full_snapshot(d);
    let r = on_tty(
        d,
        &[
            RESOURCE_Q,
            CHOICES,
            "send:y\r",
            CONTROLLER_Q,
            CHOICES,
            "send:\x03",
        ],
        &API,
        TtyOpts::default(),
    );
    assert_eq!(r.code, 128 + 2, "{}", r.screen); // ended by SIGINT
    assert_eq!(before, full_snapshot(d));

    let r = on_tty(
        d,
        &[RESOURCE_Q, CHOICES, "send:\x04"],
        &API,
        TtyOpts::default(),
    );
    assert_eq!(r.code, 1, "{}", r.screen);
    assert!(
        r.screen.contains("no answer to \"Create Resource\""),
        "{}",
        r.screen
    );
    assert!(r.screen.contains("--resource=false"), "{}", r.screen);
    assert_eq!(before, full_snapshot(d));
}

#[test]
fn commands_find_the_project_root_from_a_subdirectory() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let sub = d.join("config/default");
    let out = opbuilder(&sub)
        .args(API)
        .args(["--resource", "--controller"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(has_types(d) && has_controller(d));
    assert!(!sub.join("api").exists() && !sub.join("PROJECT").exists());
    let err = text(&out.stderr);
    assert!(
        err.contains("working in the project at ../.."),
        "stderr: {err}"
    );
    // Paths in the report are relative to the root.
    assert!(text(&out.stdout).contains("create    api/v1/frigate_types.go"));

    let out = opbuilder(&d.join("api/v1"))
        .args([
            "create",
            "webhook",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--defaulting",
            "--skip-post-steps",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(d.join("internal/webhook/v1/frigate_webhook.go").exists());

    let out = opbuilder(&sub)
        .args(["edit", "--multigroup"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(project_file(d).contains("multigroup: true"));
}

#[test]
fn outside_any_project_the_error_says_how_to_start_one() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("not-a-project");
    fs::create_dir(&d).unwrap();
    let before = full_snapshot(&d);
    let out = opbuilder(&d).args(API).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("or any directory above it"), "{err}");
    assert!(err.contains("opbuilder init --domain"), "{err}");
    assert_eq!(before, full_snapshot(&d));
}

/// The example commands of a help text: lines after `Example(s):` up to a blank line, with
/// `\` continuations joined. Fails when a line is neither a command nor a continuation (a
/// command wrapped by the help formatter).
fn examples(help: &str, what: &str) -> Vec<String> {
    let mut lines = help
        .lines()
        .skip_while(|l| !l.starts_with("Example"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty());
    let mut out: Vec<String> = vec![];
    let mut continued = false;
    for l in lines.by_ref() {
        if continued {
            assert!(
                l.starts_with("      "),
                "{what}: wrapped line {l:?}\n{help}"
            );
            out.last_mut().unwrap().push_str(l.trim());
        } else {
            assert!(
                l.starts_with("  opbuilder "),
                "{what}: {l:?} is not a whole command\n{help}"
            );
            out.push(l.trim().to_string());
        }
        continued = l.ends_with(" \\");
        if continued {
            let last = out.last_mut().unwrap();
            last.truncate(last.len() - 1);
        }
    }
    assert!(!continued, "{what}: ends in a continuation\n{help}");
    out
}

#[test]
fn help_examples_are_whole_pasteable_commands_at_100_and_80_columns() {
    let t = tempfile::tempdir().unwrap();
    // Outside any project, and inside a project of the Rust layout (its own help).
    let rust = t.path().join("rs");
    fs::create_dir(&rust).unwrap();
    crate::support::ok(
        &rust,
        &[
            "init",
            "--plugins=rust.opbuilder.io/v1-beta",
            "--domain",
            "example.com",
            "--project-name",
            "rs",
            "--skip-post-steps",
        ],
    );
    for dir in [t.path().to_path_buf(), rust] {
        help_examples_parse(&dir);
    }
}

fn help_examples_parse(dir: &Path) {
    let commands: [&[&str]; 13] = [
        &[],
        &["init"],
        &["create"],
        &["create", "api"],
        &["create", "webhook"],
        &["edit"],
        &["alpha"],
        &["alpha", "generate"],
        &["alpha", "update"],
        &["alpha", "check"],
        &["version"],
        &["completion"],
        &["man"],
    ];
    for columns in ["100", "80"] {
        for c in commands {
            let out = opbuilder(dir)
                .args(c)
                .arg("--help")
                .env("COLUMNS", columns)
                .output()
                .unwrap();
            assert!(out.status.success());
            let help = text(&out.stdout);
            let what = format!("COLUMNS={columns} {c:?} in {}", dir.display());
            let found = examples(&help, &what);
            assert!(!found.is_empty(), "{what}: no examples\n{help}");
            for e in found {
                // Each example is accepted by the parser (up to a shell redirection, pipe or
                // the next command).
                let words: Vec<String> = crate::support::split_words(&e)
                    .into_iter()
                    .skip(1)
                    .take_while(|w| !matches!(w.as_str(), ">" | "|" | "&&"))
                    .collect();
                let out = opbuilder(dir).args(&words).arg("--help").output().unwrap();
                assert!(
                    out.status.success(),
                    "{what}: example {e:?} does not parse:\n{}",
                    text(&out.stderr)
                );
            }
        }
    }
}

#[test]
fn init_next_to_a_lone_makefile_says_what_is_in_the_way() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    fs::write(d.join("Makefile"), "all:\n\techo hi\n").unwrap();
    let before = full_snapshot(d);
    let out = opbuilder(d)
        .args([
            "init",
            "--repo",
            "example.com/x",
            "--project-name",
            "x",
            "--skip-post-steps",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(!err.contains("create api"), "{err}");
    assert!(
        err.contains("no PROJECT file: it is not a project yet"),
        "{err}"
    );
    assert!(err.contains("mv Makefile Makefile.old"), "{err}");
    assert_eq!(before, full_snapshot(d));
}

#[test]
fn second_version_with_a_controller_hints_controller_false() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    opbuilder(d)
        .args(API)
        .args(["--resource", "--controller"])
        .assert()
        .success();
    let before = full_snapshot(d);
    let v2 = [
        "create",
        "api",
        "--group",
        "ship",
        "--version",
        "v2",
        "--kind",
        "Frigate",
        "--skip-post-steps",
        "--resource",
    ];
    let out = opbuilder(d).args(v2).arg("--controller").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("--controller=false"), "{err}");
    assert!(err.contains("version v1"), "{err}");
    assert!(!err.contains("--force"), "{err}");
    assert_eq!(before, full_snapshot(d));
    // The hint works.
    opbuilder(d)
        .args(v2)
        .arg("--controller=false")
        .assert()
        .success();
    assert!(d.join("api/v2/frigate_types.go").exists());
}

/// A directory with fake `go` and `make`; `make` prints a line, and `make generate` then waits
/// (`make controller-gen`, run alongside `go mod tidy`, returns at once).
fn fake_tools(go_fails: bool) -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    let go = if go_fails {
        "#!/bin/sh\necho \"fake go: $*\"\nexit 1\n"
    } else {
        "#!/bin/sh\necho \"fake go: $*\"\n"
    };
    let make =
        "#!/bin/sh\necho \"fake make: $*\"\n[ \"$1\" = generate ] || exit 0\nexec sleep 60\n";
    for (name, body) in [("go", go), ("make", make)] {
        let p = bin.path().join(name);
        fs::write(&p, body).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    bin
}

fn path_with(bin: &Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn ctrl_c_during_make_generate_names_what_is_left_to_run() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let bin = fake_tools(false);
    let r = on_tty(
        d,
        &["expect:fake make: generate", "send:\x03"],
        &[
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--resource",
            "--controller",
        ],
        TtyOpts {
            env: vec![("PATH", path_with(bin.path()))],
            cwd: Some(d.join("config")),
            ..Default::default()
        },
    );
    assert_eq!(r.code, 130, "{}", r.screen);
    assert!(
        r.screen
            .contains("interrupted during `make generate GENERATE_PATHS=./api/v1`"),
        "{}",
        r.screen
    );
    assert!(
        r.screen.contains("\n  cd .. && make generate"),
        "{}",
        r.screen
    );
    // The transaction had finished: the files stay.
    assert!(has_types(d) && has_controller(d));
}

#[test]
fn a_failed_post_step_names_the_commands_and_where_to_run_them() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let bin = fake_tools(true);
    let out = opbuilder(&d.join("config/default"))
        .args([
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--resource",
            "--controller",
        ])
        .env("PATH", path_with(bin.path()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("\n  cd ../.. && go mod tidy && make generate"),
        "{err}"
    );
}

const CREATE_GREEN: &str = "\x1b[1;32mcreate\x1b[0m";

fn api_both() -> Vec<&'static str> {
    let mut a = API.to_vec();
    a.extend(["--resource", "--controller"]);
    a
}

#[test]
fn status_lines_are_coloured_on_a_terminal_and_plain_otherwise() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let r = on_tty(d, &[], &api_both(), TtyOpts::default());
    assert_eq!(r.code, 0, "{}", r.screen);
    assert!(
        r.screen
            .contains(&format!("  {CREATE_GREEN}    api/v1/frigate_types.go")),
        "{:?}",
        r.screen
    );
    assert!(
        r.screen.contains("\x1b[1;36mupdate\x1b[0m"),
        "{:?}",
        r.screen
    );

    for env in [("NO_COLOR", "1"), ("TERM", "dumb")] {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        init_project(d, &[]);
        let r = on_tty(
            d,
            &[],
            &api_both(),
            TtyOpts {
                env: vec![(env.0, env.1.to_string())],
                ..Default::default()
            },
        );
        assert_eq!(r.code, 0, "{}", r.screen);
        assert!(
            r.screen.contains("  create    api/v1/frigate_types.go"),
            "{env:?}: {:?}",
            r.screen
        );
        assert!(!r.screen.contains('\x1b'), "{env:?}: {:?}", r.screen);
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let out = opbuilder(d)
        .args(api_both())
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(out.status.success());
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(all.contains("  create    api/v1/frigate_types.go"), "{all}");
    assert!(!all.contains('\x1b'), "{all:?}");
}

/// Every `TODO(user)` guide comment under `dir`, as (relative path, text after the tag).
fn guide_comments(dir: &Path) -> Vec<(String, String)> {
    let mut found = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let Ok(body) = fs::read_to_string(&p) else {
                continue;
            };
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
            for line in body.lines() {
                if let Some((_, rest)) = line.split_once("TODO(user): ") {
                    found.push((rel.clone(), rest.to_string()));
                }
            }
        }
    }
    found.sort();
    found
}

fn assert_guides(found: &[(String, String)], want: &[(&str, &str)]) {
    for (file, start) in want {
        assert!(
            found
                .iter()
                .any(|(f, text)| f == file && text.starts_with(start)),
            "no `TODO(user): {start}...` in {file}; found:\n{found:#?}"
        );
    }
}

/// Issue 12: a newcomer finds where to write code with one `grep -rn "TODO(user)"`,
/// in a fresh project and after create api / create webhook (incl. conversion).
#[test]
fn guide_comments_mark_where_the_user_writes_code() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let fresh: &[(&str, &str)] = &[
        ("Makefile", "name your registry"),
        ("Dockerfile", "copy anything else"),
        ("README.md", "replace this paragraph"),
        ("cmd/main.go", "for production, mount a certificate"),
        ("cmd/main.go", "decide about LeaderElectionReleaseOnCancel"),
        (
            "config/default/kustomization.yaml",
            "enable the optional parts",
        ),
        (
            "config/manager/manager.yaml",
            "to keep the manager on particular nodes",
        ),
        ("config/manager/manager.yaml", "these are starting values"),
        (
            "config/network-policy/allow-metrics-traffic.yaml",
            "label the namespace",
        ),
        (
            "config/prometheus/monitor.yaml",
            "for production, verify it",
        ),
        ("test/e2e/e2e_suite_test.go", "use the image name"),
        ("test/e2e/e2e_test.go", "add specs for your own controllers"),
    ];
    let found = guide_comments(d);
    assert_guides(&found, fresh);
    assert_eq!(found.len(), fresh.len(), "{found:#?}");

    for args in [
        "create api --group ship --version v1 --kind Frigate --resource --controller",
        "create api --group ship --version v2 --kind Frigate --resource --controller=false",
        "create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation",
        "create webhook --group ship --version v1 --kind Frigate --conversion --spoke v2",
    ] {
        opbuilder(d)
            .args(args.split(' '))
            .arg("--skip-post-steps")
            .assert()
            .success();
    }
    let found = guide_comments(d);
    assert_guides(
        &found,
        &[
            ("api/v1/frigate_types.go", "replace Foo with the fields"),
            (
                "api/v1/frigate_types.go",
                "add the fields the controller reports",
            ),
            ("api/v2/frigate_types.go", "replace Foo with the fields"),
            (
                "config/samples/ship_v1_frigate.yaml",
                "set the fields of FrigateSpec",
            ),
            (
                "internal/controller/frigate_controller.go",
                "add a marker for every other resource",
            ),
            (
                "internal/controller/frigate_controller.go",
                "compare frigate with what exists",
            ),
            (
                "internal/controller/frigate_controller.go",
                "also watch the objects",
            ),
            (
                "internal/controller/frigate_controller_test.go",
                "fill in the spec fields",
            ),
            (
                "internal/controller/frigate_controller_test.go",
                "assert what Reconcile should have done",
            ),
            (
                "internal/webhook/v1/frigate_webhook.go",
                "replace this example with the defaults",
            ),
            ("internal/webhook/v1/frigate_webhook.go", "check obj here"),
            (
                "internal/webhook/v1/frigate_webhook.go",
                "compare oldObj with newObj",
            ),
            ("internal/webhook/v1/frigate_webhook.go", "refuse deletions"),
            (
                "internal/webhook/v1/frigate_webhook_test.go",
                "add a test for every rule",
            ),
            (
                "internal/webhook/v1/frigate_webhook_test.go",
                "add round-trip tests",
            ),
            (
                "api/v2/frigate_conversion.go",
                "copy the spec and status fields to dst",
            ),
            (
                "api/v2/frigate_conversion.go",
                "copy the spec and status fields from src",
            ),
        ],
    );
}

/// A directory with a fake `go` whose `go install PKG@V` writes a small script as $GOBIN/NAME
/// and logs the build to $FAKE_GO_LOG; `go env GOOS|GOARCH` answers linux / amd64.
fn fake_go_builder() -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    let go = r#"#!/bin/sh
case "$1" in
env) case "$2" in GOOS) echo linux ;; GOARCH) echo amd64 ;; esac ;;
install)
	pkg=${2%@*}
	name=${pkg##*/}
	mkdir -p "$GOBIN"
	printf '#!/bin/sh\necho %s\n' "$name" >"$GOBIN/$name"
	chmod +x "$GOBIN/$name"
	echo "$2" >>"$FAKE_GO_LOG"
	;;
esac
"#;
    let p = bin.path().join("go");
    fs::write(&p, go).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// Issue 13: the generated Makefile builds a tool once per user (TOOLS_CACHE) and copies it
/// into later projects; `TOOLS_CACHE=` builds in the project and leaves the cache alone.
#[test]
fn generated_makefile_reuses_tools_from_the_user_cache() {
    if Command::new("make").arg("--version").output().is_err() {
        panic!("make is required for this test");
    }
    let t = tempfile::tempdir().unwrap();
    let cache = t.path().join("cache");
    let log = t.path().join("builds.log");
    let bin = fake_go_builder();
    let make = |project: &Path, tools_cache: &Path| {
        let out = Command::new("make")
            .arg("controller-gen")
            .current_dir(project)
            .env("PATH", path_with(bin.path()))
            .env("TOOLS_CACHE", tools_cache)
            .env("FAKE_GO_LOG", &log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let builds = || fs::read_to_string(&log).unwrap_or_default().lines().count();
    let cached = || -> Vec<String> {
        fs::read_dir(&cache)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };

    let first = t.path().join("first");
    fs::create_dir(&first).unwrap();
    init_project(&first, &[]);
    let out = make(&first, &cache);
    assert!(
        out.contains("Installing sigs.k8s.io/controller-tools/cmd/controller-gen@"),
        "{out}"
    );
    assert_eq!(builds(), 1);
    let names = cached();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(
        names[0].starts_with("controller-gen-v") && names[0].ends_with("-linux-amd64"),
        "{names:?}"
    );
    let tool = first.join("bin/controller-gen");
    assert!(
        tool.exists()
            && fs::symlink_metadata(&tool)
                .unwrap()
                .file_type()
                .is_symlink()
    );

    // A second project copies it: no build.
    let second = t.path().join("second");
    fs::create_dir(&second).unwrap();
    init_project(&second, &[]);
    let out = make(&second, &cache);
    assert!(out.contains("Copying controller-gen"), "{out}");
    assert_eq!(builds(), 1);
    let run = Command::new(second.join("bin/controller-gen"))
        .output()
        .unwrap();
    assert_eq!(text(&run.stdout).trim(), "controller-gen");

    // Opting out: built in the project, the cache left as it was.
    let third = t.path().join("third");
    fs::create_dir(&third).unwrap();
    init_project(&third, &[]);
    let out = make(&third, Path::new(""));
    assert!(out.contains("Installing"), "{out}");
    assert_eq!(builds(), 2);
    assert_eq!(cached(), names);
    assert!(third.join("bin/controller-gen").exists());
}

/// Issue 13: post-steps that would change nothing are not run, and `make controller-gen` runs
/// alongside `go mod tidy`. Fake `go` and `make` log their arguments.
#[test]
fn post_steps_that_would_change_nothing_are_skipped() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p");
    fs::create_dir(&d).unwrap();
    init_project(&d, &[]);
    fs::write(d.join("go.sum"), "").unwrap();
    let log = t.path().join("calls.log");
    let bin = tempfile::tempdir().unwrap();
    for name in ["go", "make"] {
        let p = bin.path().join(name);
        fs::write(
            &p,
            format!("#!/bin/sh\necho \"{name} $*\" >>\"$CALLS_LOG\"\n"),
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let run = |args: &[&str]| -> (Vec<String>, String) {
        let _ = fs::remove_file(&log);
        let out = opbuilder(&d)
            .args(args)
            .env("PATH", path_with(bin.path()))
            .env("CALLS_LOG", &log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let mut calls: Vec<String> = fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect();
        calls.sort();
        (calls, text(&out.stdout))
    };
    let api = |kind: &'static str| {
        vec![
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            kind,
            "--resource",
            "--controller",
        ]
    };
    // The first API imports packages the project did not import yet: everything runs.
    let (calls, _) = run(&api("Frigate"));
    assert_eq!(
        calls,
        [
            "go mod tidy",
            "make controller-gen",
            "make generate GENERATE_PATHS=./api/v1"
        ],
        "first create api"
    );
    // A second kind imports nothing new: no go mod tidy.
    let (calls, out) = run(&api("Destroyer"));
    // DeepCopy methods only for the package that changed.
    assert_eq!(
        calls,
        [
            "make controller-gen",
            "make generate GENERATE_PATHS=./api/v1"
        ],
        "{out}"
    );
    assert!(out.contains("Not running `go mod tidy`"), "{out}");
    // Webhooks change no API package: no make generate.
    let (calls, out) = run(&[
        "create",
        "webhook",
        "--group",
        "ship",
        "--version",
        "v1",
        "--kind",
        "Frigate",
        "--defaulting",
    ]);
    assert!(!calls.iter().any(|c| c.starts_with("make")), "{calls:?}");
    assert!(out.contains("Not running `make generate`"), "{out}");
}
