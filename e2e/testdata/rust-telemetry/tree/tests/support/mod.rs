/*
Copyright 2026 The Guestbook Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

//! A throwaway control plane for the integration tests, as Kubebuilder's envtest gives Go
//! projects: etcd and kube-apiserver from `KUBEBUILDER_ASSETS` on free local ports, with the
//! project's CRDs installed. Each test file starts its own; it is stopped when dropped.

#![allow(dead_code)] // each test file uses a part of it

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, Config};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};
use serde::Deserialize;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use guestbook::api::crds;
use guestbook::manager::Caches;
use guestbook::tls::CertFiles;
use guestbook::webhook::{self, Cluster, Route, Webhook};
use guestbook::{controllers, leader_election, rbac};

/// How long the control plane may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(90);
/// How many times the control plane is started, on other ports each time, when a port chosen
/// for it was taken before etcd or kube-apiserver could listen on it.
const START_ATTEMPTS: u32 = 3;

/// The namespace of the manager's ServiceAccount in the tests (and of its Lease).
pub const MANAGER_NAMESPACE: &str = "default";
/// The manager's ServiceAccount, as config/rbac names it.
pub const MANAGER_ACCOUNT: &str = "controller-manager";

/// A running etcd and kube-apiserver, and a client of it with full rights.
pub struct ControlPlane {
    pub client: Client,
    /// A kubeconfig for the API server (to look around while a test is paused).
    pub kubeconfig: PathBuf,
    config: Config,
    processes: Processes,
}

/// The processes and their directory: stopped and removed when dropped (the directory is
/// kept, with the logs, when a test fails).
struct Processes {
    dir: PathBuf,
    children: Vec<Child>,
}

impl Processes {
    /// Kill the processes, the last started first, and wait for them.
    fn stop(&mut self) {
        for mut p in self.children.drain(..).rev() {
            let _ = p.kill();
            let _ = p.wait();
        }
    }

    /// Whether etcd or kube-apiserver says in its log that an address it was to listen on was
    /// in use.
    fn port_was_taken(&self) -> bool {
        ["etcd", "kube-apiserver"].iter().any(|name| {
            std::fs::read_to_string(self.dir.join(format!("{name}.log")))
                .is_ok_and(|log| log.contains("address already in use"))
        })
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        self.stop();
        if std::thread::panicking() {
            eprintln!("control plane logs kept in {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Where kube-apiserver and etcd are; panics with how to get them when they are missing, so a
/// test never passes without having run.
fn assets() -> PathBuf {
    let how = "get them with `make setup-envtest` (downloads them) or `make envtest-from-source` \
               (builds them through a Go module proxy), then run `make test`; or point \
               KUBEBUILDER_ASSETS at a directory holding both";
    let Some(dir) = std::env::var_os("KUBEBUILDER_ASSETS") else {
        panic!(
            "KUBEBUILDER_ASSETS is not set: the integration tests need kube-apiserver and etcd; {how}"
        );
    };
    let dir = PathBuf::from(dir);
    for bin in ["kube-apiserver", "etcd"] {
        assert!(
            dir.join(bin).is_file(),
            "{} has no {bin}: the integration tests need kube-apiserver and etcd; {how}",
            dir.display()
        );
    }
    dir
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free local port");
    listener.local_addr().expect("its address").port()
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// A CA, the API server's certificate, an admin client certificate (group system:masters) and
/// the service-account signing key, written to `dir`.
fn pki(dir: &Path) -> Result<(), rcgen::Error> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "envtest-ca");
    write(&dir.join("ca.crt"), &ca.self_signed(&ca_key)?.pem());
    let issuer = Issuer::new(ca, ca_key);

    let server_key = KeyPair::generate()?;
    let mut server = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".into()])?;
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    write(
        &dir.join("apiserver.crt"),
        &server.signed_by(&server_key, &issuer)?.pem(),
    );
    write(&dir.join("apiserver.key"), &server_key.serialize_pem());

    let admin_key = KeyPair::generate()?;
    let mut admin = CertificateParams::new(Vec::<String>::new())?;
    admin
        .distinguished_name
        .push(DnType::CommonName, "envtest-admin");
    admin
        .distinguished_name
        .push(DnType::OrganizationName, "system:masters");
    admin.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    write(
        &dir.join("admin.crt"),
        &admin.signed_by(&admin_key, &issuer)?.pem(),
    );
    write(&dir.join("admin.key"), &admin_key.serialize_pem());

    let sa = KeyPair::generate()?;
    write(&dir.join("sa.key"), &sa.serialize_pem());
    write(&dir.join("sa.pub"), &sa.public_key_pem());
    Ok(())
}

/// The CustomResourceDefinitions of other projects' kinds that the project keeps in
/// external-crds/ (`opbuilder create api --external-api-path` copies them there), file by file.
fn external_crds() -> Vec<CustomResourceDefinition> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("external-crds");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut crds = vec![];
    for file in files {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        for doc in serde_yaml::Deserializer::from_str(&text) {
            let value = serde_yaml::Value::deserialize(doc)
                .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
            if !value.is_null() {
                crds.push(serde_yaml::from_value(value).unwrap_or_else(|e| {
                    panic!("{} holds no CustomResourceDefinition: {e}", file.display())
                }));
            }
        }
    }
    crds
}

/// A webhook server started by [`ControlPlane::serve_webhooks`]: its port and the PEM of the CA
/// its certificate is signed by.
pub struct WebhookServer {
    pub port: u16,
    pub ca: String,
}

/// A CA and a serving certificate for 127.0.0.1 signed by it, in `dir` as tls.crt and tls.key
/// (as cert-manager writes them); the CA's certificate in PEM.
fn webhook_certificates(dir: &Path) -> Result<String, rcgen::Error> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "webhook-ca");
    let ca_pem = ca.self_signed(&ca_key)?.pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate()?;
    let mut server = CertificateParams::new(vec!["127.0.0.1".to_string()])?;
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    write(
        &dir.join("tls.crt"),
        &server.signed_by(&key, &issuer)?.pem(),
    );
    write(&dir.join("tls.key"), &key.serialize_pem());
    Ok(ca_pem)
}

fn launch(assets: &Path, dir: &Path, name: &str, args: &[String]) -> Child {
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).expect("a log file");
    Command::new(assets.join(name))
        .args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("a log file"))
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {name}: {e}"))
}

/// Start etcd and kube-apiserver on free ports in `dir` (its certificates made already) and
/// write a kubeconfig for the API server: its path.
fn launch_plane(assets: &Path, dir: &Path, processes: &mut Processes) -> PathBuf {
    let (etcd, peer, api) = (free_port(), free_port(), free_port());
    let path = |f: &str| dir.join(f).display().to_string();
    processes.children.push(launch(
        assets,
        dir,
        "etcd",
        &[
            format!("--data-dir={}", path("etcd")),
            format!("--listen-client-urls=http://127.0.0.1:{etcd}"),
            format!("--advertise-client-urls=http://127.0.0.1:{etcd}"),
            format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
            format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer}"),
            format!("--initial-cluster=default=http://127.0.0.1:{peer}"),
            "--unsafe-no-fsync=true".into(),
            "--log-level=warn".into(),
        ],
    ));
    processes.children.push(launch(
        assets,
        dir,
        "kube-apiserver",
        &[
            format!("--etcd-servers=http://127.0.0.1:{etcd}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            format!("--secure-port={api}"),
            format!("--cert-dir={}", path("serving")),
            format!("--tls-cert-file={}", path("apiserver.crt")),
            format!("--tls-private-key-file={}", path("apiserver.key")),
            format!("--client-ca-file={}", path("ca.crt")),
            "--authorization-mode=RBAC".into(),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
            format!("--service-account-key-file={}", path("sa.pub")),
            format!("--service-account-signing-key-file={}", path("sa.key")),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            "--endpoint-reconciler-type=none".into(),
            "--disable-admission-plugins=ServiceAccount".into(),
            // As OpenShift has it: an owner reference that blocks the owner's deletion needs
            // `update` on the owner's finalizers (controller RBAC grants it).
            "--enable-admission-plugins=OwnerReferencesPermissionEnforcement".into(),
        ],
    ));
    let kubeconfig = dir.join("kubeconfig");
    write(
        &kubeconfig,
        &format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    \
             server: https://127.0.0.1:{api}\n    certificate-authority: {}\nusers:\n- name: admin\n  \
             user:\n    client-certificate: {}\n    client-key: {}\ncontexts:\n- name: envtest\n  \
             context:\n    cluster: envtest\n    user: admin\n    namespace: default\n\
             current-context: envtest\n",
            path("ca.crt"),
            path("admin.crt"),
            path("admin.key")
        ),
    );
    kubeconfig
}

impl ControlPlane {
    /// Start etcd and kube-apiserver, wait until the API server answers, and install the
    /// project's CRDs.
    pub async fn start() -> ControlPlane {
        let assets = assets();
        let dir = std::env::temp_dir().join(format!(
            "{}-envtest-{}-{}",
            env!("CARGO_PKG_NAME"),
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the control plane");
        pki(&dir).expect("certificates for the control plane");
        let mut processes = Processes {
            dir: dir.clone(),
            children: vec![],
        };
        let mut attempt = 1;
        loop {
            let kubeconfig = launch_plane(&assets, &dir, &mut processes);
            let options = KubeConfigOptions::default();
            let config = Kubeconfig::read_from(&kubeconfig).expect("the kubeconfig");
            let config = Config::from_custom_kubeconfig(config, &options)
                .await
                .expect("a client configuration");
            let mut plane = ControlPlane {
                client: Client::try_from(config.clone()).expect("a client"),
                kubeconfig,
                config,
                processes,
            };
            match plane.wait_until_ready().await {
                Ok(()) => {
                    plane.install_crds().await;
                    return plane;
                }
                // A free port may be taken by another process (any outgoing connection can get
                // it as its local port) between the moment it is chosen and the moment etcd or
                // kube-apiserver listens on it: start again on other ports.
                Err(_) if attempt < START_ATTEMPTS && plane.processes.port_was_taken() => {
                    eprintln!(
                        "the control plane stopped: a port chosen for it was taken meanwhile; \
                         starting again on other ports"
                    );
                    processes = plane.processes;
                    processes.stop();
                    let _ = std::fs::remove_dir_all(dir.join("etcd"));
                    attempt += 1;
                }
                Err(stopped) => panic!("{stopped}"),
            }
        }
    }

    /// Wait until the API server serves the namespace `default` (it creates it at start); an
    /// error when etcd or kube-apiserver stops first.
    async fn wait_until_ready(&mut self) -> Result<(), String> {
        let started = Instant::now();
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(self.client.clone());
        loop {
            if namespaces
                .get_opt("default")
                .await
                .is_ok_and(|n| n.is_some())
            {
                return Ok(());
            }
            for p in &mut self.processes.children {
                if let Ok(Some(status)) = p.try_wait() {
                    return Err(format!(
                        "the control plane stopped ({status}); see the logs in {}",
                        self.processes.dir.display()
                    ));
                }
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "the API server did not become ready in {START_TIMEOUT:?}; see the logs in {}",
                self.processes.dir.display()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A client acting as the manager's ServiceAccount, with exactly the RBAC the code
    /// declares, as config/rbac grants it: the ClusterRole of every controller's `RBAC` and the
    /// manager's, and leader election's Role in [`MANAGER_NAMESPACE`]. A controller run with it
    /// fails where its code needs a rule it does not declare.
    pub async fn manager_client(&self) -> Client {
        let params = PatchParams::apply("envtest").force();
        let subjects = Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: MANAGER_ACCOUNT.into(),
            namespace: Some(MANAGER_NAMESPACE.into()),
            ..Subject::default()
        }]);
        let role_ref = |kind: &str, name: &str| RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: kind.into(),
            name: name.into(),
        };
        let meta = |name: &str| ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        };
        let cluster_role = rbac::cluster_role(&controllers::rbac());
        let cluster_binding = ClusterRoleBinding {
            metadata: meta("manager-rolebinding"),
            role_ref: role_ref("ClusterRole", "manager-role"),
            subjects: subjects.clone(),
        };
        let role = rbac::leader_election_role(leader_election::RBAC);
        let binding = RoleBinding {
            metadata: meta("leader-election-rolebinding"),
            role_ref: role_ref("Role", "leader-election-role"),
            subjects,
        };
        Api::<ClusterRole>::all(self.client.clone())
            .patch("manager-role", &params, &Patch::Apply(&cluster_role))
            .await
            .unwrap_or_else(|e| panic!("installing the manager's ClusterRole: {e}"));
        Api::<ClusterRoleBinding>::all(self.client.clone())
            .patch(
                "manager-rolebinding",
                &params,
                &Patch::Apply(&cluster_binding),
            )
            .await
            .unwrap_or_else(|e| panic!("installing its binding: {e}"));
        Api::<Role>::namespaced(self.client.clone(), MANAGER_NAMESPACE)
            .patch("leader-election-role", &params, &Patch::Apply(&role))
            .await
            .unwrap_or_else(|e| panic!("installing leader election's Role: {e}"));
        Api::<RoleBinding>::namespaced(self.client.clone(), MANAGER_NAMESPACE)
            .patch(
                "leader-election-rolebinding",
                &params,
                &Patch::Apply(&binding),
            )
            .await
            .unwrap_or_else(|e| panic!("installing its binding: {e}"));
        let mut config = self.config.clone();
        config.auth_info.impersonate = Some(format!(
            "system:serviceaccount:{MANAGER_NAMESPACE}:{MANAGER_ACCOUNT}"
        ));
        config.auth_info.impersonate_groups = Some(vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{MANAGER_NAMESPACE}"),
            "system:authenticated".into(),
        ]);
        Client::try_from(config).expect("a client acting as the manager")
    }

    /// Serve `routes` on a free local port with a certificate of a CA of its own, and install
    /// `webhooks`' configurations pointing there, so that the API server calls them. The
    /// handlers read [`Self::cluster`]. The server stops with the test.
    pub async fn serve_webhooks(&self, routes: Vec<Route>, webhooks: &[Webhook]) -> WebhookServer {
        let dir = self.processes.dir.join("webhook-certs");
        std::fs::create_dir_all(&dir).expect("a directory for the webhook certificate");
        let ca = webhook_certificates(&dir).expect("a webhook certificate");
        let address = ([127, 0, 0, 1], 0).into();
        let cluster = self.cluster().await;
        let server = webhook::Server::bind(address, CertFiles::new(dir), routes, cluster)
            .await
            .expect("the webhook server listening");
        let port = server.local_addr().expect("its address").port();
        tokio::spawn(server.serve(std::future::pending()));
        let url = |path: &str| WebhookClientConfig {
            url: Some(format!("https://127.0.0.1:{port}{path}")),
            ca_bundle: Some(ByteString(ca.clone().into_bytes())),
            ..WebhookClientConfig::default()
        };
        let (mutating, validating) = webhook::configurations(webhooks, url);
        let params = PostParams::default();
        if let Some(m) = mutating {
            let api: Api<MutatingWebhookConfiguration> = Api::all(self.client.clone());
            api.create(&params, &m)
                .await
                .expect("the mutating webhooks");
        }
        if let Some(v) = validating {
            let api: Api<ValidatingWebhookConfiguration> = Api::all(self.client.clone());
            api.create(&params, &v)
                .await
                .expect("the validating webhooks");
        }
        WebhookServer { port, ca }
    }

    /// What a webhook handler reads of this API server: the cluster as the manager's
    /// ServiceAccount (see [`Self::manager_client`]), without the controllers' caches.
    pub async fn cluster(&self) -> Cluster {
        Cluster::new(self.manager_client().await, Caches::default())
    }

    /// Make the API server convert the objects of the CRD `name` with the conversion webhook
    /// of `server`.
    pub async fn convert_with_webhook(&self, name: &str, server: &WebhookServer) {
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let patch = serde_json::json!({ "spec": { "conversion": {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": format!("https://127.0.0.1:{}{}", server.port, webhook::CONVERSION_PATH),
                    "caBundle": ByteString(server.ca.clone().into_bytes()),
                },
            },
        } } });
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap_or_else(|e| panic!("switching the CRD {name} to the conversion webhook: {e}"));
    }

    /// Create the project's CRDs, and those of other projects' kinds that it keeps in
    /// external-crds/, and wait until each is established.
    async fn install_crds(&self) {
        for crd in crds().into_iter().chain(external_crds()) {
            self.install_crd(&crd).await;
        }
    }

    /// Create a CRD (one of the project's, or one a test declares) and wait until it is
    /// established.
    pub async fn install_crd(&self, crd: &CustomResourceDefinition) {
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let name = crd.metadata.name.clone().unwrap_or_default();
        api.create(&PostParams::default(), crd)
            .await
            .unwrap_or_else(|e| panic!("creating the CRD {name}: {e}"));
        let established = await_condition(api.clone(), &name, conditions::is_crd_established());
        tokio::time::timeout(Duration::from_secs(30), established)
            .await
            .unwrap_or_else(|_| panic!("the CRD {name} was not established in 30 s"))
            .unwrap_or_else(|e| panic!("waiting for the CRD {name}: {e}"));
    }
}
