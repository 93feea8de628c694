//! The PROJECT file: Kubebuilder's project config, version "3".
//!
//! - [`model`]: what PROJECT holds (`Project`, `Resource` and their parts), the queries commands
//!   ask of it, and each plugin's section under `plugins:`;
//! - [`read`]: finding and loading PROJECT; read by [`fast`] when it has the shape opbuilder and
//!   Kubebuilder write, else with serde_yaml (accepting `layout` as a scalar or a list and
//!   keeping keys we do not model, such as `plugins`);
//! - [`version`]: which project versions opbuilder reads, and what an older version becomes when
//!   written (any layout reads: the plugin chain says what it can run);
//! - [`emit`]: the writer, with Kubebuilder's shape: keys sorted alphabetically at every level,
//!   empty and false values omitted, sequences not indented under their key, and `version: "3"`
//!   quoted; [`scalar`] decides when a string must be quoted.

pub mod emit;
pub mod fast;
pub mod model;
pub mod read;
pub mod scalar;
pub mod shared;
pub mod version;

pub use model::{
    is_rust_layout, Api, Controller, Project, Resource, Webhooks, BASE_GO, FILE, LAYOUT,
    RUST_LAYOUT, RUST_LAYOUT_V1_ALPHA, RUST_LAYOUT_V1_ALPHA_RELEASE,
};
pub use read::find_root;

#[cfg(test)]
mod tests {
    //! Projects the tests of every part share: a sample, and random ones for the property tests.
    use super::model::*;
    use serde_yaml::Value;

    pub(super) fn sample() -> Project {
        Project {
            cli_version: "0.1.0".into(),
            domain: "example.com".into(),
            layout: vec![LAYOUT.into()],
            project_name: "guestbook".into(),
            repo: "example.com/guestbook".into(),
            version: "3".into(),
            resources: vec![Resource {
                api: Some(Api {
                    crd_version: "v1".into(),
                    namespaced: true,
                    ssa: false,
                }),
                controller: true,
                domain: "example.com".into(),
                group: "ingress".into(),
                kind: "App".into(),
                path: "example.com/guestbook/api/v1beta1".into(),
                version: "v1beta1".into(),
                webhooks: Some(Webhooks {
                    defaulting: true,
                    validation: true,
                    webhook_version: "v1".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn round_trips_and_keeps_unknown_keys() {
        let mut y = sample().to_yaml();
        y.push_str("plugins:\n  grafana.kubebuilder.io/v1-alpha: {}\n");
        let p = Project::parse(&y).unwrap();
        assert_eq!(p.resources, sample().resources);
        let again = p.to_yaml();
        assert!(
            again.contains("plugins:\n  grafana.kubebuilder.io/v1-alpha: {}\n"),
            "{again}"
        );
        assert_eq!(Project::parse(&again).unwrap(), p);
    }

    pub(super) struct Rng(pub(super) u64);

    impl Rng {
        pub(super) fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
        pub(super) fn flag(&mut self) -> bool {
            self.below(2) == 0
        }
        pub(super) fn text(&mut self) -> String {
            const WORDS: &[&str] = &[
                "",
                "",
                "v1",
                "App",
                "example.com",
                "3",
                "1.5",
                "true",
                "No",
                "null",
                "~",
                "a b",
                "x\"y",
                "back\\slash",
                "inf",
                "NaN",
                "-x",
                ".x",
                "@x",
                "(devel)",
                "0.1.0",
                "0x1f",
                "0o7",
                "12:30",
                "1_000",
                "+1",
                "1e5",
                "ü",
                "a:b",
                "tab\t",
                "new\nline",
                "go.kubebuilder.io/v4",
                "/validate-x",
                "k8s.io/api/core/v1",
                ",",
                "=",
                ":",
                "image:1.2",
                "1:20.5",
            ];
            WORDS[self.below(WORDS.len())].to_string()
        }
        pub(super) fn texts(&mut self) -> Vec<String> {
            (0..self.below(3)).map(|_| self.text()).collect()
        }
    }

    pub(super) fn random_project(r: &mut Rng) -> Project {
        let mut p = Project {
            cli_version: r.text(),
            domain: r.text(),
            layout: r.texts(),
            multigroup: r.flag(),
            namespaced: r.flag(),
            project_name: r.text(),
            repo: r.text(),
            version: ["3", "3-alpha", ""][r.below(3)].into(),
            ..Default::default()
        };
        if r.below(4) == 0 {
            p.other.insert(
                Value::String("plugins".into()),
                serde_yaml::from_str(
                    "grafana.kubebuilder.io/v1-alpha: {}\nx.io/v1:\n  resources:\n  - kind: A\n",
                )
                .unwrap(),
            );
        }
        for _ in 0..r.below(4) {
            let mut res = Resource {
                api: r.flag().then(|| Api {
                    crd_version: r.text().into(),
                    namespaced: r.flag(),
                    ssa: r.flag(),
                }),
                controller: r.flag(),
                controllers: (0..r.below(3))
                    .map(|_| Controller { name: r.text() })
                    .collect(),
                core: r.flag(),
                domain: r.text().into(),
                external: r.flag(),
                group: r.text().into(),
                kind: r.text(),
                module: r.text(),
                path: r.text().into(),
                plural: r.text(),
                version: r.text().into(),
                webhooks: r.flag().then(|| Webhooks {
                    conversion: r.flag(),
                    defaulting: r.flag(),
                    defaulting_path: r.text(),
                    spoke: r.texts(),
                    validation: r.flag(),
                    validation_path: r.text(),
                    webhook_version: r.text(),
                }),
                ..Default::default()
            };
            if r.below(8) == 0 {
                res.other
                    .insert(Value::String("zz".into()), Value::String(r.text()));
            }
            p.resources.push(res);
        }
        p
    }
}
