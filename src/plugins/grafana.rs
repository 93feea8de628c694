//! grafana.kubebuilder.io/v1-alpha: Grafana dashboards for the manager's metrics
//! (`scaffolds/grafana/`), plus one dashboard for the user's own metrics, listed in
//! grafana/custom-metrics/config.yaml and rewritten each time the plugin runs.
//!
//! In a project of the Rust layout the two manager dashboards are go/v4's without the panels
//! whose metrics the Rust manager cannot export (see [`for_rust`]).

use crate::out::errln;
use crate::plan::IfExists;
use crate::planning::edit::EditArgs;
use crate::planning::plugin::{Cx, Plugin};
use crate::templates;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_yaml::{Mapping, Value};

pub const NAME: &str = "grafana.kubebuilder.io";
pub const KEY: &str = "grafana.kubebuilder.io/v1-alpha";
pub const CONFIG: &str = "grafana/custom-metrics/config.yaml";
const CUSTOM_DASHBOARD: &str = "grafana/custom-metrics/custom-metrics-dashboard.json";

pub struct Grafana;

/// The plugin's PROJECT section: Kubebuilder records it empty (`{}`).
#[derive(Serialize)]
struct Section {}

/// One entry of config.yaml's `customMetrics` (the keys are Kubebuilder's).
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
pub struct CustomMetric {
    #[serde(default)]
    pub metric: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub expr: String,
    #[serde(default)]
    pub unit: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CustomConfig {
    #[serde(default)]
    custom_metrics: Option<Vec<CustomMetric>>,
}

/// The entries that can be plotted, with `expr` and `unit` filled in as Kubebuilder does: an
/// entry needs an expression, or a metric with a counter, gauge or histogram type.
pub fn usable_metrics(config_yaml: &str) -> Result<Vec<CustomMetric>> {
    let cfg: CustomConfig = if config_yaml.trim().is_empty() {
        CustomConfig::default()
    } else {
        serde_yaml::from_str(config_yaml)?
    };
    let sel = "{job=\"$job\", namespace=\"$namespace\"}";
    let mut out = vec![];
    for mut m in cfg.custom_metrics.unwrap_or_default() {
        let kind = m.kind.to_ascii_lowercase();
        let typed = matches!(kind.as_str(), "counter" | "gauge" | "histogram");
        let plottable = !m.expr.is_empty() || (typed && !m.metric.is_empty());
        if !plottable {
            continue;
        }
        if m.expr.is_empty() {
            m.expr = match kind.as_str() {
                "counter" => format!("sum(rate({}{sel}[5m])) by (instance, pod)", m.metric),
                "histogram" => format!(
                    "histogram_quantile(0.90, sum by(instance, le) (rate({}{sel}[5m])))",
                    m.metric
                ),
                _ => m.metric.clone(),
            };
        }
        if m.unit.is_empty() {
            let name = m.metric.to_ascii_lowercase();
            m.unit = if name.contains("second") || name.contains("duration") {
                "s"
            } else if name.contains("byte") {
                "bytes"
            } else if name.contains("ratio") {
                "percent"
            } else {
                "none"
            }
            .into();
        }
        out.push(m);
    }
    Ok(out)
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut q = String::from('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\r' => q.push_str("\\r"),
            '\t' => q.push_str("\\t"),
            c if (c as u32) < 0x20 => q.push_str(&format!("\\u{:04x}", c as u32)),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// The custom-metrics dashboard: one time series per metric, two to a row.
pub fn custom_dashboard(metrics: &[CustomMetric]) -> String {
    const DS: &str = r#"{ "type": "prometheus", "uid": "${datasource}" }"#;
    let panels: Vec<String> = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let title = if m.metric.is_empty() { &m.expr } else { &m.metric };
            format!(
                r#"    {{
      "id": {id},
      "type": "timeseries",
      "title": {title},
      "datasource": {DS},
      "gridPos": {{ "h": 8, "w": 12, "x": {x}, "y": {y} }},
      "fieldConfig": {{ "defaults": {{ "unit": {unit} }}, "overrides": [] }},
      "options": {{ "legend": {{ "displayMode": "list", "placement": "bottom", "showLegend": true }}, "tooltip": {{ "mode": "multi", "sort": "desc" }} }},
      "targets": [
        {{ "refId": "A", "datasource": {DS}, "expr": {expr}, "legendFormat": "{{{{pod}}}}", "range": true }}
      ]
    }}"#,
                id = i + 1,
                title = json_str(title),
                x = (i % 2) * 12,
                y = (i / 2) * 8,
                unit = json_str(&m.unit),
                expr = json_str(&m.expr),
            )
        })
        .collect();
    let var = |name: &str, label: &str, query: &str| {
        format!(
            r#"      {{ "name": "{name}", "label": "{label}", "type": "query", "datasource": {DS}, "query": {{ "query": {q}, "refId": "{name}" }}, "definition": {q}, "refresh": 2, "sort": 1, "hide": 0, "includeAll": false, "multi": false, "current": {{}} }}"#,
            q = json_str(query)
        )
    };
    format!(
        r#"{{
  "title": "Operator: custom metrics",
  "uid": "operator-custom-metrics",
  "description": "The metrics listed in grafana/custom-metrics/config.yaml.",
  "tags": ["operator"],
  "editable": true,
  "graphTooltip": 1,
  "refresh": "30s",
  "schemaVersion": 39,
  "timezone": "browser",
  "time": {{ "from": "now-1h", "to": "now" }},
  "timepicker": {{}},
  "links": [],
  "annotations": {{ "list": [] }},
  "templating": {{
    "list": [
      {{ "name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus", "current": {{}}, "hide": 0, "refresh": 1 }},
{ns},
{job}
    ]
  }},
  "panels": [
{panels}
  ],
  "version": 1
}}
"#,
        ns = var(
            "namespace",
            "Namespace",
            "label_values(controller_runtime_reconcile_total, namespace)"
        ),
        job = var(
            "job",
            "Job",
            "label_values(controller_runtime_reconcile_total{namespace=\"$namespace\"}, job)"
        ),
        panels = panels.join(",\n"),
    )
}

/// The panels of go/v4's dashboards whose metrics the Rust manager (src/manager.rs) cannot
/// export: kube-rs's controller lets a panic end the manager, and its scheduler keeps its queue
/// to itself. (The worker limit, `--max-concurrent-reconciles`, is served.)
const NOT_IN_RUST: [&str; 3] = ["Panics (1h)", "Queue depth", "Time waiting in the queue"];

/// The Go runtime's panels of the resources dashboard, and what the Rust manager shows in their
/// place: (title, new title, description, metric).
const RUST_PANELS: [(&str, &str, &str, &str); 2] = [
    (
        "Go heap in use",
        "Virtual memory",
        "Virtual memory of the manager process.",
        "process_virtual_memory_bytes",
    ),
    (
        "Goroutines",
        "Tokio tasks",
        "Tasks of the manager's tokio runtime that are alive.",
        "tokio_alive_tasks",
    ),
];

/// go/v4's dashboard `file` (its JSON text) for the Rust manager: the panels of [`NOT_IN_RUST`]
/// left out (the others of their row widened to fill it), those of [`RUST_PANELS`] replaced.
pub fn for_rust(file: &str, json: &str) -> Result<String> {
    let mut d: Value = serde_yaml::from_str(json).with_context(|| format!("{file}: not JSON"))?;
    let panels = d
        .get_mut("panels")
        .and_then(Value::as_sequence_mut)
        .with_context(|| format!("{file}: no panels"))?;
    let title = |p: &Value| {
        p.get("title")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let y = |p: &Value| p["gridPos"]["y"].as_u64().unwrap_or(0);
    // The rows of panels that lose one: their panels share the width left.
    let mut rows: Vec<u64> = panels
        .iter()
        .filter(|p| NOT_IN_RUST.contains(&title(p).as_str()))
        .map(y)
        .collect();
    rows.dedup();
    panels.retain(|p| !NOT_IN_RUST.contains(&title(p).as_str()));
    for row in rows {
        let n = panels.iter().filter(|p| y(p) == row).count() as u64;
        for (i, p) in panels.iter_mut().filter(|p| y(p) == row).enumerate() {
            p["gridPos"]["w"] = Value::from(24 / n);
            p["gridPos"]["x"] = Value::from(24 / n * i as u64);
        }
    }
    for p in panels.iter_mut() {
        let Some((_, new, description, metric)) =
            RUST_PANELS.iter().find(|(old, ..)| *old == title(p))
        else {
            continue;
        };
        p["title"] = Value::from(*new);
        p["description"] = Value::from(*description);
        if let Some(targets) = p.get_mut("targets").and_then(Value::as_sequence_mut) {
            for t in targets {
                let expr = t["expr"].as_str().unwrap_or("").to_string();
                let selector = expr.find('{').map_or("", |i| &expr[i..]);
                t["expr"] = Value::from(format!("{metric}{selector}"));
            }
        }
    }
    let description = match d["uid"].as_str() {
        Some("operator-resources") => "CPU, memory, file descriptors and tokio tasks of the Rust manager pod.",
        _ => "Reconciliation and work-queue metrics that the Rust manager (src/manager.rs) exports under \
              controller-runtime's names. kube-rs keeps its queue to itself and a panic ends the manager: no \
              queue depth, time waiting in the queue or panics.",
    };
    d["description"] = Value::from(description);
    let mut out = String::new();
    write_json(&mut out, &d, 0);
    out.push('\n');
    Ok(out)
}

/// `v` as JSON indented by two spaces, as go/v4's dashboards are written.
fn write_json(out: &mut String, v: &Value, depth: usize) {
    let pad = |n: usize| "  ".repeat(n);
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(&b.to_string()),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => out.push_str(&json_str(s)),
        Value::Sequence(items) if items.is_empty() => out.push_str("[]"),
        Value::Sequence(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.push_str(&pad(depth + 1));
                write_json(out, item, depth + 1);
            }
            out.push_str(&format!("\n{}]", pad(depth)));
        }
        Value::Mapping(m) if m.is_empty() => out.push_str("{}"),
        Value::Mapping(m) => write_object(out, m, depth),
        Value::Tagged(t) => write_json(out, &t.value, depth),
    }
}

fn write_object(out: &mut String, m: &Mapping, depth: usize) {
    out.push('{');
    for (i, (k, v)) in m.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        out.push_str(&"  ".repeat(depth + 1));
        out.push_str(&json_str(k.as_str().unwrap_or_default()));
        out.push_str(": ");
        write_json(out, v, depth + 1);
    }
    out.push_str(&format!("\n{}}}", "  ".repeat(depth)));
}

impl Plugin for Grafana {
    fn key(&self) -> &'static str {
        KEY
    }

    fn edit(&self, cx: &mut Cx, _args: &EditArgs) -> Result<()> {
        cx.project.set_plugin_config(KEY, &Section {})?;
        let rust = cx
            .project
            .layout
            .iter()
            .any(|k| crate::project::is_rust_layout(k));
        for f in templates::render_tree("grafana", &(), |_| true)? {
            let (policy, content) = if f.template == CONFIG {
                (IfExists::Skip, f.content)
            } else if rust {
                (IfExists::Overwrite, for_rust(&f.template, &f.content)?)
            } else {
                (IfExists::Overwrite, f.content)
            };
            cx.plan.create(f.path, content, policy);
        }
        // Like Kubebuilder, the custom dashboard comes from the config as it is before this run,
        // and a config that cannot be read is reported without stopping the other files.
        if let Ok(text) = std::fs::read_to_string(cx.root.join(CONFIG)) {
            match usable_metrics(&text) {
                Ok(m) if !m.is_empty() => {
                    cx.plan
                        .create(CUSTOM_DASHBOARD, custom_dashboard(&m), IfExists::Overwrite)
                }
                Ok(_) => {}
                Err(e) => errln!(
                    "{} {CONFIG} is not valid ({e}); the custom-metrics dashboard was not written. \
                     Fix the file and run `opbuilder edit --plugins={KEY}` again",
                    crate::term::label("warning")
                ),
            }
        }
        cx.notes.push(format!(
            "Import the dashboards in grafana/ into Grafana (Dashboards > New > Import). List your own metrics \
             in {CONFIG} and run `opbuilder edit --plugins={KEY}` again to get a dashboard for them."
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_metrics_are_filtered_and_completed_like_kubebuilders() {
        let m = usable_metrics(
            "customMetrics:\n- metric: a_total\n  type: counter\n- metric: b_seconds\n  type: Histogram\n\
             - metric: c_bytes\n  type: gauge\n- metric: no_type\n- expr: up\n- metric: d\n  type: summary\n",
        )
        .unwrap();
        let got: Vec<(&str, &str)> = m
            .iter()
            .map(|m| (m.metric.as_str(), m.unit.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("a_total", "none"),
                ("b_seconds", "s"),
                ("c_bytes", "bytes"),
                ("", "none")
            ]
        );
        assert!(
            m[0].expr.starts_with("sum(rate(a_total{job=\"$job\""),
            "{}",
            m[0].expr
        );
        assert!(
            m[1].expr.starts_with("histogram_quantile(0.90,"),
            "{}",
            m[1].expr
        );
        assert_eq!(m[2].expr, "c_bytes");
        assert_eq!(m[3].expr, "up");
        assert!(usable_metrics("customMetrics:\n").unwrap().is_empty());
        assert!(usable_metrics("customMetrics: [").is_err());
    }

    #[test]
    fn the_rust_dashboards_leave_out_what_the_rust_manager_cannot_export() {
        for f in templates::render_tree("grafana", &(), |t| t.ends_with(".json")).unwrap() {
            let rust = for_rust(&f.template, &f.content).unwrap();
            let d: Value = serde_yaml::from_str(&rust).unwrap();
            let before: Value = serde_yaml::from_str(&f.content).unwrap();
            // Everything but the panels and the description is go/v4's.
            for (k, v) in before.as_mapping().unwrap() {
                if !matches!(k.as_str(), Some("panels" | "description")) {
                    assert_eq!(&d[k], v, "{}: {k:?}", f.template);
                }
            }
            for p in d["panels"].as_sequence().unwrap() {
                let title = p["title"].as_str().unwrap();
                assert!(!NOT_IN_RUST.contains(&title), "{title}");
                let w = p["gridPos"]["w"].as_u64().unwrap();
                let x = p["gridPos"]["x"].as_u64().unwrap();
                assert!(x + w <= 24, "{title}");
                for t in p["targets"].as_sequence().into_iter().flatten() {
                    let expr = t["expr"].as_str().unwrap();
                    assert!(!expr.contains("go_"), "{expr}");
                    assert!(!expr.contains("workqueue_depth"), "{expr}");
                }
            }
        }
        // The JSON written reads back as written.
        let v: Value =
            serde_yaml::from_str(r#"{"a": [1, {"b": "c\"d"}], "e": {}, "f": []}"#).unwrap();
        let mut out = String::new();
        write_json(&mut out, &v, 0);
        assert_eq!(
            out,
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"c\\\"d\"\n    }\n  ],\n  \"e\": {},\n  \"f\": []\n}"
        );
    }

    #[test]
    fn json_strings_escape_quotes_and_control_characters() {
        assert_eq!(json_str("a\"b\\c\n\u{1}"), r#""a\"b\\c\n\u0001""#);
    }
}
