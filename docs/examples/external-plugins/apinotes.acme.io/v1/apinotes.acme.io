#!/usr/bin/env python3
"""apinotes.acme.io/v1: an example external plugin for opbuilder (and Kubebuilder).

It keeps docs/apis.md, a page that lists the project's APIs and webhooks, and docs/README.md,
which names the team that owns the operator. Install it by copying this directory tree to
~/.config/kubebuilder/plugins (or pointing EXTERNAL_PLUGINS_PATH at its parent), then:

    opbuilder init --plugins=go/v4,apinotes.acme.io/v1 --domain example.com --repo example.com/app --team storage
    opbuilder create api --group ship --version v1 --kind Frigate --summary "A fast warship"
    opbuilder edit --plugins=apinotes.acme.io/v1 --team web

The protocol: one JSON request on stdin, one JSON response on stdout, logs on stderr.
"""
import json
import sys

FLAGS = {
    "init": [{"name": "team", "type": "string", "default": "platform",
              "usage": "the team that owns the operator (docs/README.md)"}],
    "api": [{"name": "summary", "type": "string", "default": "",
             "usage": "one line about the kind, for docs/apis.md"}],
    # The webhook kinds are go/v4's flags too: declared here, they are read in a chain of this
    # plugin alone.
    "webhook": [{"name": n, "type": "bool", "default": "false", "usage": f"note a {w} webhook"}
                for n, w in (("defaulting", "defaulting"), ("programmatic-validation", "validating"),
                             ("conversion", "conversion"))],
    "edit": [{"name": "team", "type": "string", "default": "",
              "usage": "change the team that owns the operator"}],
}

HELP = {
    "init": ("Starts docs/README.md (the owning team) and docs/apis.md (the API list).",
             "opbuilder init --plugins=go/v4,apinotes.acme.io/v1 --domain example.com "
             "--repo example.com/fleet --team storage"),
    "api": ("Adds the new kind to docs/apis.md, with --summary.",
            'opbuilder create api --group ship --version v1 --kind Frigate --summary "A fast warship"'),
    "webhook": ("Notes the kind's webhooks in docs/apis.md.",
                "opbuilder create webhook --group ship --version v1 --kind Frigate --defaulting"),
    "edit": ("With --team, changes the owning team in docs/README.md.",
             "opbuilder edit --plugins=apinotes.acme.io/v1 --team web"),
}


def options(args):
    """--name value, --name=value and --name (true), as a dict."""
    out = {}
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("--"):
            continue
        name, eq, value = arg[2:].partition("=")
        if not eq:
            if i < len(args) and not args[i].startswith("--"):
                value = args[i]
                i += 1
            else:
                value = "true"
        out[name] = value
    return out


def readme(config, team):
    name = config.get("projectName") or "This project"
    return f"# {name}\n\nThe operator is owned by team {team}. Its APIs are listed in apis.md.\n"


def main():
    request = json.load(sys.stdin)
    command = request["command"]
    args = request.get("args") or []
    config = request.get("config") or {}
    universe = request.get("universe") or {}
    response = {"apiVersion": "v1alpha1", "command": command, "universe": {}}
    files = response["universe"]
    opts = options(args)

    if command == "flags":
        response["flags"] = FLAGS.get(args[0].lstrip("-"), [])
    elif command == "metadata":
        description, examples = HELP.get(args[0].lstrip("-"), ("", ""))
        response["metadata"] = {"description": description, "examples": examples}
    elif command == "init":
        files["docs/README.md"] = readme(config, opts.get("team", "platform"))
        files["docs/apis.md"] = "# APIs\n"
    elif command in ("create api", "create webhook"):
        if "kind" not in opts or "version" not in opts:
            response["error"] = True
            response["errorMsgs"] = ["apinotes: --version and --kind are needed"]
        else:
            group = opts.get("group", "")
            domain = config.get("domain", "")
            qualified = ".".join(p for p in (group, domain) if p)
            gvk = f"{opts['kind']} ({qualified}/{opts['version']})"
            page = universe.get("docs/apis.md", "# APIs\n")
            if command == "create api":
                summary = opts.get("summary") or "No summary yet."
                page += f"\n## {gvk}\n\n{summary}\n"
            else:
                kinds = [w for w, flag in (("defaulting", "defaulting"),
                                           ("validation", "programmatic-validation"),
                                           ("conversion", "conversion")) if flag in opts]
                page += f"\nWebhooks of {gvk}: {', '.join(kinds) or 'none'}.\n"
            files["docs/apis.md"] = page
            print(f"apinotes: noted {gvk} in docs/apis.md", file=sys.stderr)
    elif command == "edit":
        if "team" in opts:
            files["docs/README.md"] = readme(config, opts["team"])
    else:
        response["error"] = True
        response["errorMsgs"] = [f"apinotes: unknown command {command!r}"]

    json.dump(response, sys.stdout)


if __name__ == "__main__":
    main()
