//! opbuilder: scaffold Kubernetes operators in the Kubebuilder go/v4 layout, offline and transactionally.

#[cfg(test)]
mod architecture;
mod commands;
mod context;
mod error;
mod flect;
mod fsx;
mod gomod;
mod hbs;
mod journal;
mod lifecycle;
mod lock;
mod markers;
mod merge;
mod out;
mod plan;
mod planning;
mod plugins;
mod project;
mod releases;
mod resource;
mod templates;
mod term;
mod validate;
mod versions;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use out::{errln, outln};
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "Examples:
  opbuilder init --domain example.com --repo example.com/guestbook
  opbuilder init --plugins=rust.opbuilder.io/v1-beta --domain example.com \\
      --project-name guestbook
  opbuilder create api --group webapp --version v1 --kind Guestbook
  opbuilder version
  opbuilder completion bash \\
      > ~/.local/share/bash-completion/completions/opbuilder

Every writing command accepts --dry-run to print its plan without writing anything.
`create` and `edit` run the layout `init` gave the project; their --help, run inside a
project, shows the flags and examples of its layout.";

/// `create`'s examples in a project of the Rust layout.
const RUST_CREATE_EXAMPLES: &str =
    "Examples (this project has the Rust layout, rust.opbuilder.io/v1-beta):
  opbuilder create api --group webapp --version v1 --kind Guestbook
  opbuilder create webhook --group webapp --version v1 --kind Guestbook \\
      --defaulting --programmatic-validation

Run from anywhere inside the project; `opbuilder create api --help` has more.";

/// `create api`'s examples in a project of the Rust layout.
const RUST_API_EXAMPLES: &str =
    "Examples (this project has the Rust layout, rust.opbuilder.io/v1-beta):
  opbuilder create api --group webapp --version v1 --kind Guestbook
  opbuilder create api --group webapp --version v2 --kind Guestbook \\
      --controller=false
  opbuilder create api --group infra --version v1 --kind Cluster \\
      --namespaced=false
  opbuilder create api --group apps --version v1 --kind Deployment \\
      --resource=false --controller
  opbuilder create api --group cache --version v1alpha1 --kind Memcached \\
      --image=memcached:1.6.26-alpine3.19 --image-container-port=11211 \\
      --plugins=deploy-image/v1-alpha
  opbuilder create api --group cert-manager --external-api-domain io \\
      --version v1 --kind Certificate --resource=false --controller \\
      --external-api-path deploy/crds/cert-manager.io_certificates.yaml \\
      --external-api-module github.com/cert-manager/cert-manager@v1.21.1
  opbuilder create api --group gateway --external-api-domain networking.k8s.io \\
      --version v1 --kind HTTPRoute --resource=false --controller \\
      --external-api-path crds/gateway.networking.k8s.io_httproutes.yaml

Another project's kind (--external-api-path): its CustomResourceDefinition is
a YAML file, relative to the project's root, or a path inside the Go module
(MODULE@VERSION, from the Go module cache: `go mod download` it first) or the
crate (crate:NAME@VERSION, from cargo's crate cache) --external-api-module
names. The project keeps a copy in external-crds/ and kopium (installed with
cargo when missing) generates its Rust types in src/external.

The Go layout's --ssa and --controller-name are left out: this layout always
writes status by server-side apply and has one controller per kind.";

/// `create webhook`'s examples in a project of the Rust layout.
const RUST_WEBHOOK_EXAMPLES: &str =
    "Examples (this project has the Rust layout, rust.opbuilder.io/v1-beta):
  opbuilder create webhook --group webapp --version v1 --kind Guestbook \\
      --defaulting --programmatic-validation
  opbuilder create webhook --group webapp --version v1 --kind Guestbook \\
      --conversion --spoke v2

The Go layout's --external-api-* are left out: this layout has no webhooks
for other crates' types yet.";

/// `edit`'s examples in a project of the Rust layout.
const RUST_EDIT_EXAMPLES: &str =
    "Examples (this project has the Rust layout, rust.opbuilder.io/v1-beta):
  opbuilder edit --namespaced
  opbuilder edit --namespaced=false
  opbuilder edit --plugins=helm/v2-alpha
  opbuilder edit --plugins=grafana/v1-alpha

The Go layout's --multigroup, --license, --license-file and --owner are left
out: APIs are always laid out by group, and the license header is edited by
hand.";

const CREATE_EXAMPLES: &str = "Examples:
  opbuilder create api --group batch --version v1 --kind MyCronJob
  opbuilder create api --group apps --version v1 --kind Deployment \\
      --resource=false --controller
  opbuilder create webhook --group batch --version v1 --kind MyCronJob \\
      --defaulting --programmatic-validation

Run from anywhere inside the project; `opbuilder create api --help` has more.";

#[derive(Debug, Parser)]
#[command(
    name = "opbuilder",
    version = concat!(
        env!("CARGO_PKG_VERSION"),
        " (Kubebuilder ",
        env!("OPBUILDER_KUBEBUILDER"),
        " layout)"
    ),
    about = "Scaffold Kubernetes operator projects in Go (Kubebuilder's go/v4 layout) or in Rust on kube-rs, offline and transactionally",
    long_about = "opbuilder scaffolds Kubernetes operator projects in one of two layouts, chosen by `init`:

  go/v4 (the default): Go on controller-runtime, Kubebuilder v4.16's layout (go/v4 + kustomize/v2): \
API types, controllers, webhooks, envtest suites, kustomize manifests, a Makefile and a PROJECT file \
that Kubebuilder can read too.

  rust.opbuilder.io/v1-beta (init --plugins=rust.opbuilder.io/v1-beta; beta): Rust on kube-rs: a \
Cargo project with the same kustomize tree, Makefile targets and PROJECT file; its CRDs and RBAC \
are generated from the Rust source.

It needs no Go and no network to scaffold, and every command either writes all of its files or none.",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create a new operator project in the current directory: Go (go/v4, the default) or Rust
    /// (--plugins=rust.opbuilder.io/v1-beta)
    Init(planning::init::InitArgs),
    /// Add an API (types, controller) or a webhook to the project
    #[command(subcommand, after_help = CREATE_EXAMPLES)]
    Create(CreateCommand),
    /// Remove an API (types, controller) or webhooks that `create` added
    #[command(subcommand, after_help = DELETE_EXAMPLES)]
    Delete(DeleteCommand),
    /// Change project-wide settings (multigroup, namespaced, license)
    Edit(planning::edit::EditArgs),
    /// Experimental commands: regenerate a project, update it to newer templates, check it is current
    #[command(
        subcommand,
        after_help = "Examples:
  opbuilder alpha check
  opbuilder alpha update --dry-run
  opbuilder alpha generate --output-dir ../guestbook-regenerated --dry-run

Each has more: `opbuilder alpha update --help`."
    )]
    Alpha(commands::alpha::AlphaCommand),
    /// Print opbuilder's version, its layouts and the versions they scaffold
    #[command(after_help = "Example:\n  opbuilder version")]
    Version,
    /// Print a shell completion script (bash, elvish, fish, powershell or zsh)
    #[command(
        after_help = "Examples:\n  opbuilder completion bash \\\n      > ~/.local/share/bash-completion/completions/opbuilder\n  opbuilder completion zsh > \"${fpath[1]}/_opbuilder\"\n  opbuilder completion fish \\\n      > ~/.config/fish/completions/opbuilder.fish\n\nThe shell opens the file, not opbuilder: create its directory first if it is missing\n(mkdir -p ~/.local/share/bash-completion/completions)."
    )]
    Completion {
        /// The shell to generate a script for
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page, or write every page into a directory
    #[command(
        after_help = "Examples:\n  opbuilder man --dir ~/.cargo/share/man/man1 && man opbuilder\n  opbuilder man | man -l -"
    )]
    Man {
        /// Write opbuilder.1 and a page per subcommand (opbuilder-create-api.1, ...) into DIR
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum CreateCommand {
    /// Add API types and/or a controller for a kind
    Api(planning::api::ApiArgs),
    /// Add defaulting, validating or conversion webhooks for a kind
    Webhook(planning::webhook::WebhookArgs),
}

#[derive(Debug, Subcommand)]
enum DeleteCommand {
    /// Take away a kind's API types and/or controllers, and what `create api` wired in
    Api(planning::delete::DeleteApiArgs),
    /// Take away a kind's webhooks (all, or some types), and the wiring only they needed
    Webhook(planning::delete::DeleteWebhookArgs),
}

const DELETE_EXAMPLES: &str = "Examples:
  opbuilder delete webhook --group batch --version v1 --kind MyCronJob
  opbuilder delete api --group batch --version v1 --kind MyCronJob --dry-run

Files `create` wrote that you changed since are kept and named (--force removes them);
code elsewhere that still uses what goes stops the command (--force goes on).";

fn print_version() {
    let p = &versions::pins().scaffold;
    let r = &versions::pins().rust;
    outln!("opbuilder {}", versions::cli_version());
    outln!(
        "  kubebuilder:        {} (the release whose layout and plugins it matches)",
        versions::pins().e2e.kubebuilder
    );
    outln!("  kubernetes:         {}", p.kubernetes_target);
    outln!(
        "  layout:             {} (Go, the default; PROJECT version 3)",
        project::LAYOUT
    );
    outln!("    controller-runtime: {}", p.controller_runtime);
    outln!("    k8s.io libraries:   {}", p.k8s_libs);
    outln!("    controller-tools:   {}", p.controller_tools);
    outln!("    kustomize:          {}", p.kustomize);
    outln!("    golangci-lint:      {}", p.golangci_lint);
    outln!("    go directive:       {}", p.go_directive);
    outln!(
        "  layout:             {} (Rust on kube-rs, beta: init --plugins={})",
        project::RUST_LAYOUT,
        project::RUST_LAYOUT
    );
    outln!("    kube:               {}", r.kube);
    outln!(
        "    k8s-openapi:        {} (feature {})",
        r.k8s_openapi,
        r.k8s_openapi_feature
    );
    outln!(
        "    rust:               {} or newer (the image builds with rust:{})",
        r.rust_version,
        r.rust_image
    );
}

/// The root of the project around the current directory; says so when it is not `.`.
fn project_root() -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir()?;
    let root = project::find_root(&cwd)?;
    if root != Path::new(".") {
        errln!(
            "{} working in the project at {} (paths below are relative to it)",
            term::label("note"),
            root.display()
        );
    }
    Ok(root)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        // Every writing command starts with `begin`: the project lock, then recovery.
        Command::Init(args) => {
            let root = Path::new(".");
            commands::begin(root, args.dry_run)?;
            commands::init::run(root, &args)
        }
        Command::Create(CreateCommand::Api(args)) => {
            let root = project_root()?;
            commands::begin(&root, args.run.dry_run)?;
            commands::with_project_templates(&root, || commands::api::run(&root, &args))
        }
        Command::Create(CreateCommand::Webhook(args)) => {
            let root = project_root()?;
            commands::begin(&root, args.run.dry_run)?;
            commands::with_project_templates(&root, || commands::webhook::run(&root, &args))
        }
        Command::Delete(DeleteCommand::Api(args)) => {
            let root = project_root()?;
            commands::begin(&root, args.run.dry_run)?;
            commands::with_project_templates(&root, || commands::delete::run_api(&root, &args))
        }
        Command::Delete(DeleteCommand::Webhook(args)) => {
            let root = project_root()?;
            commands::begin(&root, args.run.dry_run)?;
            commands::with_project_templates(&root, || commands::delete::run_webhook(&root, &args))
        }
        Command::Edit(args) => {
            let root = project_root()?;
            commands::begin(&root, args.dry_run)?;
            commands::with_project_templates(&root, || commands::edit::run(&root, &args))
        }
        Command::Alpha(cmd) => commands::alpha::run(project_root, &cmd),
        Command::Version => {
            print_version();
            Ok(())
        }
        Command::Man { dir } => commands::man::run(Cli::command(), dir.as_deref()),
        Command::Completion { shell } => {
            let mut script = vec![];
            clap_complete::generate(shell, &mut Cli::command(), "opbuilder", &mut script);
            use std::io::Write as _;
            let _ = std::io::stdout().write_all(&script);
            Ok(())
        }
    }
}

/// Kept for the life of the process, as clap wants its names.
fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// The command tree with what the external plugins of this command line add to its
/// subcommand: their flags (grouped under each plugin's key) and, for `--help`, their help.
fn with_external_plugins(
    mut cmd: clap::Command,
    ext: &plugins::ExternalCli,
    argv: &[String],
) -> clap::Command {
    use clap::{builder::BoolishValueParser, value_parser, Arg, ArgAction};
    use plugins::external::{self, protocol::FlagType};
    fn at<'c>(cmd: &'c mut clap::Command, path: &[&str]) -> &'c mut clap::Command {
        match path.split_first() {
            None => cmd,
            Some((first, rest)) => at(
                cmd.find_subcommand_mut(first).expect("a known subcommand"),
                rest,
            ),
        }
    }
    let sub = at(&mut cmd, &ext.path);
    let mut owners: Vec<(String, Vec<&str>)> = vec![];
    for (key, flags) in &ext.flags {
        for f in flags {
            if !external::valid_flag_name(&f.name)
                || external::RESERVED_FLAGS.contains(&f.name.as_str())
            {
                continue;
            }
            if let Some((_, keys)) = owners.iter_mut().find(|(n, _)| *n == f.name) {
                keys.push(key);
                continue;
            }
            // A flag opbuilder has already: the plugin reads its value from its request's args.
            if sub
                .get_arguments()
                .any(|a| a.get_long() == Some(f.name.as_str()))
            {
                continue;
            }
            owners.push((f.name.clone(), vec![key]));
            let default = match (f.kind, f.default.as_str()) {
                (_, "") | (FlagType::Bool, "false") => String::new(),
                (_, d) => format!(" [default: {d}]"),
            };
            let arg = Arg::new(leak(&f.name))
                .long(leak(&f.name))
                .help(leak(&format!("{}{default}", f.usage.trim())))
                .help_heading(*key)
                .action(ArgAction::Set);
            let arg = match f.kind {
                FlagType::Bool => arg
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value("true")
                    .value_name("BOOL")
                    .value_parser(BoolishValueParser::new()),
                FlagType::Int => arg.value_name("INT").value_parser(value_parser!(i64)),
                FlagType::Float => arg.value_name("FLOAT").value_parser(value_parser!(f64)),
                FlagType::String => arg.value_name("VALUE"),
            };
            *sub = std::mem::take(sub).arg(arg);
        }
    }
    let mut notes: Vec<String> = vec![];
    if let Some((key, _)) = ext.unlisted.first() {
        // As Kubebuilder: every flag given is accepted and passed on to the plugin.
        for (i, w) in argv.iter().enumerate() {
            let Some(name) = w.strip_prefix("--") else {
                continue;
            };
            let (name, has_value) = match name.split_once('=') {
                Some((n, _)) => (n, true),
                None => (name, false),
            };
            if !external::valid_flag_name(name)
                || external::RESERVED_FLAGS.contains(&name)
                || sub.get_arguments().any(|a| a.get_long() == Some(name))
            {
                continue;
            }
            let boolean = !has_value && argv.get(i + 1).is_none_or(|next| next.starts_with("--"));
            let arg = Arg::new(leak(name))
                .long(leak(name))
                .help(leak(&format!("passed on to {key} unchecked")))
                .help_heading(*key)
                .action(ArgAction::Set);
            let arg = if boolean {
                arg.num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value("true")
            } else {
                arg
            };
            *sub = std::mem::take(sub).arg(arg);
        }
        for (key, why) in &ext.unlisted {
            notes.push(external::flags_failed(key, why));
        }
    }
    if !ext.help.is_empty() || !notes.is_empty() {
        let mut text = sub
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        for section in ext.help.iter().chain(&notes) {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(section);
        }
        *sub = std::mem::take(sub).after_help(text);
    }
    cmd
}

/// The subcommand a request for help is about (`create api --help`, `help create api`), for
/// [`help_for_layout`].
fn help_path(argv: &[String]) -> Vec<&str> {
    let words: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
    let words = match words.split_first() {
        Some((&"help", rest)) => rest,
        _ => &words[..],
    };
    words
        .iter()
        .take_while(|w| !w.starts_with('-'))
        .take(2)
        .copied()
        .collect()
}

/// Inside a project of the Rust layout, the help of `create`, `create api`, `create webhook`
/// and `edit` shows the flags that layout takes and its examples only (the Go layout's flags it
/// refuses are hidden; the commands still parse them, to refuse them saying why).
fn help_for_layout(mut cmd: clap::Command, argv: &[String]) -> clap::Command {
    let path = help_path(argv);
    if !matches!(path.first(), Some(&"create") | Some(&"edit")) {
        return cmd;
    }
    let rust = std::env::current_dir()
        .ok()
        .and_then(|d| project::find_root(&d).ok())
        .and_then(|root| project::Project::load(&root).ok())
        .is_some_and(|p| p.rust_layout().is_some());
    if !rust {
        return cmd;
    }
    fn hide(cmd: clap::Command, ids: &[&str], examples: &'static str) -> clap::Command {
        ids.iter()
            .fold(cmd, |c, id| c.mut_arg(*id, |a| a.hide(true)))
            .after_help(examples)
    }
    const GO_RESOURCE: &[&str] = &[
        "external_api_path",
        "external_api_domain",
        "external_api_module",
        "make",
        "skip_post_steps",
    ];
    /// The external-API flags as the Rust layout's `create api` reads them.
    const RUST_EXTERNAL: &[(&str, &str)] = &[
        (
            "external_api_path",
            "The CustomResourceDefinition (YAML) of another project's kind to scaffold a controller for: a \
             file relative to the project's root, or a path inside --external-api-module",
        ),
        (
            "external_api_domain",
            "Domain of that kind's API group (--group cert-manager --external-api-domain io: cert-manager.io)",
        ),
        (
            "external_api_module",
            "MODULE@VERSION in the Go module cache, or crate:NAME@VERSION in cargo's crate cache, that holds \
             the file --external-api-path names",
        ),
    ];
    if path.first() == Some(&"edit") {
        return cmd.mut_subcommand("edit", |e| {
            hide(
                e,
                &["multigroup", "license", "license_file", "owner"],
                RUST_EDIT_EXAMPLES,
            )
        });
    }
    cmd = cmd.mut_subcommand("create", |c| {
        c.after_help(RUST_CREATE_EXAMPLES)
            .mut_subcommand("api", |a| {
                let a = RUST_EXTERNAL.iter().fold(a, |a, (id, help)| {
                    a.mut_arg(*id, |arg| arg.help(*help).value_name("PATH"))
                });
                let a = a.mut_arg("external_api_domain", |arg| arg.value_name("DOMAIN"));
                let a = a.mut_arg("external_api_module", |arg| arg.value_name("MODULE"));
                let go_only = ["ssa", "controller_name", "make", "skip_post_steps"];
                hide(a, &go_only, RUST_API_EXAMPLES)
            })
            .mut_subcommand("webhook", |w| hide(w, GO_RESOURCE, RUST_WEBHOOK_EXAMPLES))
    });
    cmd
}

/// Parse the command line, with the flags of the external plugins its chain names.
fn parse() -> Cli {
    let argv_os: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let argv: Vec<String> = argv_os
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    use clap::error::ErrorKind;
    // Most command lines parse as they are; only a flag opbuilder does not know, or a request
    // for help, sends opbuilder to the chain's external plugins for their flags and help.
    let matches = match Cli::command().try_get_matches_from(&argv_os) {
        Ok(m) => m,
        Err(e)
            if !matches!(
                e.kind(),
                ErrorKind::UnknownArgument | ErrorKind::DisplayHelp
            ) =>
        {
            e.exit()
        }
        Err(_) => {
            let help = argv.iter().any(|a| a == "--help" || a == "-h")
                || argv.get(1).is_some_and(|a| a == "help");
            let ext = plugins::external_cli(&argv, help);
            let mut cmd = with_external_plugins(Cli::command(), &ext, &argv);
            if help {
                cmd = help_for_layout(cmd, &argv);
            }
            match cmd.try_get_matches_from(&argv_os) {
                Ok(m) => m,
                Err(e) => {
                    // A flag of a plugin that could not be found: say why it is missing instead.
                    if let (ErrorKind::UnknownArgument, Some(p)) = (e.kind(), ext.problem) {
                        errln!("{} {p:#}", term::label("error"));
                        std::process::exit(error::exit_code(&p));
                    }
                    e.exit()
                }
            }
        }
    };
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let args = plugins::external::request_args(&argv);
    match &mut cli.command {
        Command::Init(a) => a.plugin_args = args,
        Command::Create(CreateCommand::Api(a)) => a.run.plugin_args = args,
        Command::Create(CreateCommand::Webhook(a)) => a.run.plugin_args = args,
        Command::Edit(a) => a.plugin_args = args,
        _ => {}
    }
    cli
}

fn main() {
    let cli = parse();
    let result = run(cli);
    lock::release();
    if let Err(err) = result {
        errln!("{} {err:#}", term::label("error"));
        std::process::exit(error::exit_code(&err));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
