//! External plugins (Kubebuilder's plugin phase 2): executables found by key that take part in
//! `init`, `create api`, `create webhook` and `edit` through JSON on stdin and stdout.
//!
//! The example plugin of docs/examples/external-plugins (apinotes.acme.io/v1, Python) and the
//! misbehaving fixtures of e2e/fixtures/external-plugins are installed by pointing
//! EXTERNAL_PLUGINS_PATH at their directory; plugins written for one test are shell scripts in
//! a plugins root of its own. The UI cases external-plugins and external-plugins-refuse pin
//! the messages; the parity suite compares the files with Kubebuilder's.

use crate::support::{full_snapshot, init_project, opbuilder, read};
use std::fs;
use std::path::{Path, PathBuf};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The plugins root of the example plugin.
fn examples() -> PathBuf {
    repo("docs/examples/external-plugins")
}

/// The plugins root of the misbehaving fixtures.
fn fixtures() -> PathBuf {
    repo("e2e/fixtures/external-plugins")
}

/// Run opbuilder in `dir` with the plugins of `plugins`; the output.
fn run_with(plugins: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    opbuilder(dir)
        .env("EXTERNAL_PLUGINS_PATH", plugins)
        .args(args)
        .output()
        .unwrap()
}

/// [`run_with`], which must succeed; its stderr.
fn ok_with(plugins: &Path, dir: &Path, args: &[&str]) -> String {
    let o = run_with(plugins, dir, args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        o.status.success(),
        "{args:?} failed:\n{}\n{err}",
        String::from_utf8_lossy(&o.stdout)
    );
    err
}

/// Install a shell-script plugin `<name>/v1/<name>` under `root`.
fn install(root: &Path, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let dir = root.join(name).join("v1");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{script}")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn layout(dir: &Path) -> Vec<String> {
    let p: serde_yaml::Value = serde_yaml::from_str(&read(dir, "PROJECT")).unwrap();
    p["layout"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

const FRIGATE: &[&str] = &[
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
    "--skip-post-steps",
];

#[test]
fn the_example_plugin_joins_go_v4_in_every_command() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let plugins = examples();
    ok_with(
        &plugins,
        d,
        &[
            "init",
            "--plugins=go/v4,apinotes.acme.io/v1",
            "--domain",
            "example.com",
            "--repo",
            "example.com/fleet",
            "--project-name",
            "fleet",
            "--team",
            "storage",
            "--skip-post-steps",
        ],
    );
    assert_eq!(layout(d), ["go.kubebuilder.io/v4", "apinotes.acme.io/v1"]);
    assert!(d.join("cmd/main.go").is_file(), "go/v4 ran too");
    assert_eq!(
        read(d, "docs/README.md"),
        "# fleet\n\nThe operator is owned by team storage. Its APIs are listed in apis.md.\n"
    );

    // PROJECT's layout is the chain: the plugin runs without --plugins, and its flag parses.
    let mut api = FRIGATE.to_vec();
    api.extend(["--summary", "A fast warship"]);
    // A dry run runs the plugin and lists its file, and writes nothing.
    let before = full_snapshot(d);
    let mut dry = api.clone();
    dry.push("--dry-run");
    let o = run_with(&plugins, d, &dry);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("would update    docs/apis.md")
            && out.contains("would create    api/v1/frigate_types.go"),
        "{out}"
    );
    assert_eq!(before, full_snapshot(d), "the dry run wrote something");
    let err = ok_with(&plugins, d, &api);
    assert!(
        err.contains("apinotes: noted Frigate (ship.example.com/v1)"),
        "its stderr is passed through: {err}"
    );
    assert!(d.join("api/v1/frigate_types.go").is_file());
    ok_with(
        &plugins,
        d,
        &[
            "create",
            "webhook",
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--defaulting",
            "--programmatic-validation",
            "--skip-post-steps",
        ],
    );
    assert_eq!(
        read(d, "docs/apis.md"),
        "# APIs\n\n## Frigate (ship.example.com/v1)\n\nA fast warship\n\n\
         Webhooks of Frigate (ship.example.com/v1): defaulting, validation.\n"
    );
    assert!(d.join("internal/webhook/v1/frigate_webhook.go").is_file());

    // edit with the plugin alone: its flag, its file; PROJECT keeps the layout.
    ok_with(
        &plugins,
        d,
        &["edit", "--plugins=apinotes/v1", "--team", "web"],
    );
    assert!(read(d, "docs/README.md").contains("team web"));
    assert_eq!(layout(d), ["go.kubebuilder.io/v4", "apinotes.acme.io/v1"]);
    // A flag of the plugin is refused where the plugin is not in the chain.
    let o = run_with(&plugins, d, &["edit", "--plugins=go/v4", "--team", "x"]);
    assert_eq!(o.status.code(), Some(2));

    // delete: go/v4's files go; what the plugin wrote stays (the protocol has no deletion), and
    // the command says so.
    let gvk = ["--group", "ship", "--version", "v1", "--kind", "Frigate"];
    for command in ["webhook", "api"] {
        let mut args = vec!["delete", command];
        args.extend(gvk);
        let err = ok_with(&plugins, d, &args);
        assert!(
            err.contains("the external plugin apinotes.acme.io/v1 has no part in a deletion"),
            "{err}"
        );
    }
    assert!(!d.join("api/v1/frigate_types.go").exists());
    assert!(!d.join("internal/webhook/v1/frigate_webhook.go").exists());
    assert!(read(d, "docs/apis.md").contains("## Frigate (ship.example.com/v1)"));
}

#[test]
fn bad_plugins_leave_a_go_project_untouched() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    init_project(d, &[]);
    let plugins = fixtures();
    let cases: &[(&str, &[&str])] = &[
        (
            "missing.acme.io/v1",
            &["no external plugin is installed as", "missing.acme.io"],
        ),
        ("notexec.acme.io/v1", &["is not executable", "chmod +x"]),
        ("misnamed.acme.io/v1", &["rename it to"]),
        (
            "crashes.acme.io/v1",
            &[
                "crashes.acme.io: panic: index out of range",
                "exited with status 3",
                "Nothing was written",
            ],
        ),
        ("garbage.acme.io/v1", &["not one JSON PluginResponse"]),
        (
            "fails.acme.io/v1",
            &[
                "reported an error",
                "the acme license server is unreachable",
                "set ACME_LICENSE or try again later",
            ],
        ),
        ("hangs.acme.io/v1", &["did not answer within 0.5 s"]),
        (
            "escapes.acme.io/v1",
            &["\"../escaped.txt\" leads outside", "\"/etc/escaped.conf\""],
        ),
    ];
    for (key, needles) in cases {
        // go/v4 plans its files first: none of them may be written either.
        let chain = format!("--plugins=go/v4,{key}");
        let mut args = FRIGATE.to_vec();
        args.push(&chain);
        let before = full_snapshot(d);
        let o = opbuilder(d)
            .env("EXTERNAL_PLUGINS_PATH", &plugins)
            .env("OPBUILDER_PLUGIN_TIMEOUT", "0.5")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        let want = if *key == "missing.acme.io/v1" { 2 } else { 1 };
        assert_eq!(o.status.code(), Some(want), "{key}: {err}");
        for n in *needles {
            assert!(err.contains(n), "{key}: stderr lacks {n:?}:\n{err}");
        }
        assert_eq!(before, full_snapshot(d), "{key} changed files");
    }
    assert!(
        !t.path().parent().unwrap().join("escaped.txt").exists(),
        "a file outside the project"
    );

    // init: the directory stays empty.
    let e = tempfile::tempdir().unwrap();
    let o = run_with(
        &plugins,
        e.path(),
        &[
            "init",
            "--plugins=go/v4,fails.acme.io/v1",
            "--domain",
            "example.com",
            "--repo",
            "example.com/x",
            "--project-name",
            "x",
            "--skip-post-steps",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(full_snapshot(e.path()).is_empty());
}

#[test]
fn a_hung_plugin_and_its_children_are_stopped() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let plugins = t.path().join("plugins");
    let pidfile = t.path().join("child.pid");
    // The plugin's child holds its stdout; it must be stopped with it. The child starts and its
    // pid is written before anything else, and the timeout leaves a loaded machine time for
    // that (with 1 s the plugin was once stopped before it wrote the pid).
    install(
        &plugins,
        "sleepy.acme.io",
        &format!(
            "sleep 600 &\necho $! > {}\ncat >/dev/null\nwait\n",
            pidfile.display()
        ),
    );
    let proj = d.join("p");
    fs::create_dir(&proj).unwrap();
    let start = std::time::Instant::now();
    let o = opbuilder(&proj)
        .env("EXTERNAL_PLUGINS_PATH", &plugins)
        .env("OPBUILDER_PLUGIN_TIMEOUT", "3")
        .args(["init", "--plugins=sleepy.acme.io/v1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did not answer within 3 s"));
    assert!(
        start.elapsed() < std::time::Duration::from_secs(30),
        "the command waited for the plugin's child"
    );
    let pid = fs::read_to_string(&pidfile)
        .expect("the plugin was stopped before it started its child (no pid file)");
    // Killed (a zombie at most, until its parent is reaped): not running on. A SIGKILL takes
    // effect when the kernel next schedules the process, which on a loaded machine is not
    // always before the command returns: a few seconds are allowed.
    let stopped = |state: &str| {
        state.is_empty() || state.split(") ").nth(1).is_some_and(|s| s.starts_with('Z'))
    };
    let mut state = String::new();
    for _ in 0..50 {
        state = fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
        if stopped(&state) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(stopped(&state), "the plugin's child still runs: {state}");
    assert!(full_snapshot(&proj).is_empty());
}

#[test]
fn the_request_carries_what_kubebuilder_sends() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("proj");
    fs::create_dir(&d).unwrap();
    let plugins = t.path().join("plugins");
    let log = t.path().join("requests");
    fs::create_dir(&log).unwrap();
    // Keeps each request; declares one flag; adds spy/<command>.txt.
    install(
        &plugins,
        "spy.acme.io",
        &format!(
            r#"req=$(cat)
n=$(ls {log} | wc -l)
printf '%s' "$req" > {log}/$n.json
case $req in
*'"command":"flags"'*) printf '{{"flags":[{{"name":"tier","type":"string","usage":"a tier"}}]}}\n'; exit 0 ;;
*'"command":"metadata"'*) printf '{{"metadata":{{"description":"spies"}}}}\n'; exit 0 ;;
esac
printf '{{"universe":{{"spy/%s.txt":"seen\\n"}}}}\n' $n
"#,
            log = log.display()
        ),
    );
    // A binary file and a git directory stay out of the universe.
    fs::create_dir(d.join(".git")).unwrap();
    fs::write(d.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    ok_with(
        &plugins,
        &d,
        &[
            "init",
            "--plugins",
            "go/v4,spy.acme.io/v1",
            "--domain",
            "example.com",
            "--repo",
            "example.com/spy",
            "--project-name",
            "spy",
            "--tier=gold",
            "--skip-post-steps",
        ],
    );
    let main_go = read(&d, "cmd/main.go");
    fs::write(d.join("logo.png"), [0x89u8, b'P', b'N', b'G', 0xff, 0xfe]).unwrap();
    ok_with(&plugins, &d, FRIGATE);
    let requests: Vec<serde_json::Value> = {
        let mut names: Vec<PathBuf> = fs::read_dir(&log)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort_by_key(|p| {
            p.file_stem()
                .unwrap()
                .to_str()
                .unwrap()
                .parse::<u32>()
                .unwrap()
        });
        names
            .iter()
            .map(|p| serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap())
            .collect()
    };
    let commands: Vec<&str> = requests
        .iter()
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    // The flags are asked for when the command line has a flag opbuilder does not know
    // (`--tier` here), not for `create api`, whose flags are all go/v4's.
    assert_eq!(commands, ["flags", "init", "create api"]);
    // The flags request: the subcommand as argument, an empty universe, nothing else.
    assert_eq!(
        requests[0],
        serde_json::json!({"apiVersion": "v1alpha1", "args": ["--init"], "command": "flags", "universe": {}})
    );

    let init = &requests[1];
    assert_eq!(init["apiVersion"], "v1alpha1");
    // Every --flag (with its value), but --plugins, as Kubebuilder passes them.
    assert_eq!(
        init["args"],
        serde_json::json!([
            "--domain",
            "example.com",
            "--repo",
            "example.com/spy",
            "--project-name",
            "spy",
            "--tier=gold",
            "--skip-post-steps"
        ])
    );
    // The plugin sees its own key first in the chain and in the layout.
    assert_eq!(
        init["pluginChain"],
        serde_json::json!(["spy.acme.io/v1", "go.kubebuilder.io/v4"])
    );
    let config = &init["config"];
    assert_eq!(config["domain"], "example.com");
    assert_eq!(config["repo"], "example.com/spy");
    assert_eq!(config["version"], "3");
    assert_eq!(
        config["layout"],
        serde_json::json!(["spy.acme.io/v1", "go.kubebuilder.io/v4"])
    );
    // The universe: go/v4's files planned so far, no PROJECT yet, nothing from .git.
    let universe = init["universe"].as_object().unwrap();
    assert!(universe.contains_key("cmd/main.go") && universe.contains_key("Makefile"));
    assert_eq!(universe["cmd/main.go"].as_str().unwrap(), main_go);
    assert!(!universe.contains_key("PROJECT"));
    assert!(!universe.keys().any(|k| k.starts_with(".git/")));

    let api = &requests[2];
    assert_eq!(
        api["args"],
        serde_json::json!([
            "--group",
            "ship",
            "--version",
            "v1",
            "--kind",
            "Frigate",
            "--resource",
            "--controller",
            "--skip-post-steps"
        ])
    );
    // The resource go/v4 recorded in this command, in the config.
    assert_eq!(api["config"]["resources"][0]["kind"], "Frigate");
    let universe = api["universe"].as_object().unwrap();
    // go/v4's new types file (planned, not yet written), PROJECT as it was, the plugin's earlier
    // file; no binary.
    assert!(universe["api/v1/frigate_types.go"]
        .as_str()
        .unwrap()
        .contains("type Frigate struct"));
    assert!(!universe["PROJECT"].as_str().unwrap().contains("Frigate"));
    assert_eq!(universe["spy/1.txt"], "seen\n");
    assert!(!universe.contains_key("logo.png"));
    assert_eq!(read(&d, "spy/2.txt"), "seen\n");
}

#[test]
fn what_a_plugin_returns_goes_through_the_plan() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("proj");
    fs::create_dir(&d).unwrap();
    init_project(&d, &[]);
    let plugins = t.path().join("plugins");
    // Rewrites PROJECT (dropped, with a note), changes the Makefile, adds a file; leaves the
    // rest of the universe out (nothing is deleted).
    install(
        &plugins,
        "edits.acme.io",
        r#"cat >/dev/null
printf '{"universe":{"PROJECT":"version: \\"3\\"\\n","Makefile":"all:\\n","acme/notes.txt":"n\\n"}}\n'
"#,
    );
    // Writes over a directory: a conflict, reported before anything is written.
    install(
        &plugins,
        "clobbers.acme.io",
        r#"cat >/dev/null
printf '{"universe":{"ok.txt":"x\\n","config":"not a directory\\n"}}\n'
"#,
    );
    let before = full_snapshot(&d);
    let o = run_with(&plugins, &d, &["edit", "--plugins=clobbers.acme.io/v1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("config: exists and is not a regular file"),
        "{err}"
    );
    assert_eq!(before, full_snapshot(&d), "a conflict wrote something");
    let project = read(&d, "PROJECT");
    let o = run_with(&plugins, &d, &["edit", "--plugins=edits.acme.io/v1"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("changed PROJECT") && out.contains("update    Makefile"),
        "{out}"
    );
    assert_eq!(read(&d, "PROJECT"), project);
    assert_eq!(read(&d, "Makefile"), "all:\n");
    assert_eq!(read(&d, "acme/notes.txt"), "n\n");
    assert!(d.join("cmd/main.go").is_file());
    // A plugin's key is recorded by init only, as Kubebuilder does: edit leaves the layout.
    assert_eq!(layout(&d), ["go.kubebuilder.io/v4"]);
}

#[test]
fn alpha_generate_and_update_rerun_installed_plugins_and_name_missing_ones() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("fleet");
    fs::create_dir(&d).unwrap();
    let plugins = examples();
    ok_with(
        &plugins,
        &d,
        &[
            "init",
            "--plugins=go/v4,apinotes.acme.io/v1",
            "--domain",
            "example.com",
            "--repo",
            "example.com/fleet",
            "--skip-post-steps",
        ],
    );
    ok_with(&plugins, &d, FRIGATE);

    // Installed: the replay runs it (its args are the replayed flags).
    let out = t.path().join("regenerated");
    let err = ok_with(
        &plugins,
        &d,
        &["alpha", "generate", "--output-dir", out.to_str().unwrap()],
    );
    assert!(!err.contains("did not run"), "{err}");
    assert_eq!(read(&out, "docs/README.md"), read(&d, "docs/README.md"));
    assert_eq!(read(&out, "docs/apis.md"), read(&d, "docs/apis.md"));
    assert_eq!(
        layout(&out),
        ["go.kubebuilder.io/v4", "apinotes.acme.io/v1"]
    );

    // Not installed: the rest is generated, the plugin is named, PROJECT still records it.
    let out2 = t.path().join("regenerated-without");
    let o = opbuilder(&d)
        .args(["alpha", "generate", "--output-dir", out2.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("the external plugin apinotes.acme.io/v1 of PROJECT's layout did not run")
            && err.contains("no external plugin is installed as"),
        "{err}"
    );
    assert!(!out2.join("docs").exists());
    assert!(out2.join("api/v1/frigate_types.go").is_file());
    assert_eq!(
        layout(&out2),
        ["go.kubebuilder.io/v4", "apinotes.acme.io/v1"]
    );

    // alpha update from 0.1.0's templates: with the plugin, its files stay (both scaffolds
    // have them); without it, a note names it.
    let old = t.path().join("old");
    ok_with(
        &plugins,
        &d,
        &[
            "alpha",
            "generate",
            "--templates-version",
            "0.1.0",
            "--output-dir",
            old.to_str().unwrap(),
        ],
    );
    assert!(old.join("docs/apis.md").is_file());
    let o = run_with(&plugins, &old, &["alpha", "update", "--dry-run"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("did not run"), "{err}");
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("docs/"),
        "the plugin's files are unchanged"
    );
    let docs = read(&old, "docs/apis.md");
    let o = opbuilder(&old).args(["alpha", "update"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("the external plugin apinotes.acme.io/v1 of PROJECT's layout did not run"),
        "{err}"
    );
    assert_eq!(read(&old, "docs/apis.md"), docs);
    assert_eq!(
        layout(&old),
        ["go.kubebuilder.io/v4", "apinotes.acme.io/v1"]
    );
}

#[test]
fn a_plugin_that_lists_no_flags_gets_every_flag_given() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("proj");
    fs::create_dir(&d).unwrap();
    init_project(&d, &[]);
    let plugins = t.path().join("plugins");
    // Fails the `flags` request (as Kubebuilder, opbuilder then passes every flag on), and
    // writes the args it got.
    install(
        &plugins,
        "open.acme.io",
        r#"req=$(cat)
case $req in
*'"command":"flags"'*) echo 'no flags here' >&2; exit 1 ;;
esac
args=$(printf '%s' "$req" | sed 's/.*"args":\(\[[^]]*\]\).*/\1/' | sed 's/"/\\"/g')
printf '{"universe":{"args.json":"%s\\n"}}\n' "$args"
"#,
    );
    ok_with(
        &plugins,
        &d,
        &[
            "edit",
            "--plugins=open.acme.io/v1",
            "--anything",
            "goes",
            "--switch",
            "--n=3",
        ],
    );
    assert_eq!(
        read(&d, "args.json"),
        "[\"--anything\",\"goes\",\"--switch\",\"--n=3\"]\n"
    );
    // --help says so.
    let o = run_with(
        &plugins,
        &d,
        &["edit", "--plugins=open.acme.io/v1", "--help"],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("open.acme.io/v1 did not list its flags, so every flag given is passed on to it unchecked"),
        "{out}"
    );
}
