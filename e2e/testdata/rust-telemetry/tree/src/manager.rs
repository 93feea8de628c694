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

//! The manager's machinery: what every controller shares ([`Context`]), the watches that feed
//! the controllers and the caches they fill ([`Caches`]), readiness ([`Health`]), the metrics,
//! the logs, and the shutdown signal.

use crate::telemetry::{Durations, exemplar};
use futures::{FutureExt, Stream, StreamExt};
use k8s_openapi::NamespaceResourceScope;
use kube::api::Api;
use kube::runtime::controller::{self, Action};
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use serde::de::DeserializeOwned;
use std::any::{Any, TypeId};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The name the manager reports as in events, and its field manager for server-side apply.
pub const MANAGER_NAME: &str = "guestbook-manager";

/// What every controller shares.
#[derive(Clone)]
pub struct Context {
    pub client: Client,
    pub recorder: Recorder,
    pub metrics: Arc<Metrics>,
    pub backoff: Arc<Backoff>,
    /// The objects the controllers keep in memory, by kind: the webhooks read them too.
    pub caches: Caches,
    /// The one namespace the controllers watch (WATCH_NAMESPACE, which config/manager sets in
    /// a namespace-scoped project: `opbuilder init --namespaced`); `None`: every namespace.
    pub namespace: Option<String>,
    /// How many objects each controller reconciles at once (`--max-concurrent-reconciles`;
    /// [`crate::controllers::MAX_CONCURRENT_RECONCILES`] by default).
    pub max_concurrent_reconciles: u16,
}

impl Context {
    pub fn new(client: Client, metrics: Arc<Metrics>) -> Context {
        let reporter = Reporter {
            controller: MANAGER_NAME.into(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Context {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            metrics,
            backoff: Arc::default(),
            caches: Caches::default(),
            namespace: None,
            max_concurrent_reconciles: crate::controllers::MAX_CONCURRENT_RECONCILES,
        }
    }

    /// The same context, each controller reconciling at most `n` objects at once (at least 1).
    pub fn reconciling_at_once(self, n: u16) -> Context {
        Context {
            max_concurrent_reconciles: n.max(1),
            ..self
        }
    }

    /// How a controller runs: at most [`Context::max_concurrent_reconciles`] reconciles at
    /// once (kube-runtime's default, 0, sets no limit), each object by one of them at a time,
    /// without debounce (a change waiting for its turn merges with the next ones of the same
    /// object anyway). A controller may ask for its own limit:
    /// `ctx.controller_config().concurrency(1)`.
    pub fn controller_config(&self) -> controller::Config {
        controller::Config::default().concurrency(self.max_concurrent_reconciles)
    }

    /// The same context, its controllers watching only `namespace` (`None`: every namespace).
    pub fn watching(self, namespace: Option<String>) -> Context {
        Context { namespace, ..self }
    }

    /// The objects of a namespaced kind the controllers watch: those of the watched namespace,
    /// or of every namespace.
    pub fn watched<K>(&self) -> Api<K>
    where
        K: Resource<Scope = NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        match &self.namespace {
            Some(namespace) => Api::namespaced(self.client.clone(), namespace),
            None => Api::all(self.client.clone()),
        }
    }

    /// What controller `name` reconciles: the objects of `api` that `config` selects, as a store
    /// and a stream of changes for `Controller::for_stream`. The objects are kept without their
    /// managedFields, which no reconcile reads and which can be half their size (an update that
    /// leaves them out keeps them); the store is in [`Context::caches`] for the webhooks; the
    /// watch's failures are reported (see [`Context::observe`]). Registers the controller's
    /// metrics.
    pub fn watch<K>(
        &self,
        name: &'static str,
        api: Api<K>,
        config: watcher::Config,
    ) -> (
        Store<K>,
        impl Stream<Item = Result<K, watcher::Error>> + Send + use<K>,
    )
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Default + Eq + Hash + Clone,
    {
        self.metrics.register(name, self.max_concurrent_reconciles);
        let metrics = self.metrics.clone();
        let (reader, writer) = reflector::store();
        self.caches.insert(reader.clone());
        let changes = self
            .observe(name, watcher(api, config).default_backoff())
            .modify(prune)
            .reflect(writer)
            .applied_objects()
            // Each object that changed is handed to the controller's queue.
            .inspect(move |object| {
                if object.is_ok() {
                    metrics.added(name);
                }
            });
        (reader, changes)
    }

    /// The events of watch `name` (a controller's, or one of the objects it owns), reported:
    /// a watch that starts failing is logged once, and once more when it recovers, and counted
    /// (`controller_watch_errors_total`, `controller_watch_failing` 1 while it fails). It is
    /// retried with backoff meanwhile, and the manager stays ready: its webhooks, which every
    /// write of their kinds waits for, keep answering (a watch failing for lack of a permission
    /// or a CRD is no reason to stop them). The backoff of an object deleted is forgotten.
    pub fn observe<K, S>(
        &self,
        name: &'static str,
        events: S,
    ) -> impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + use<K, S>
    where
        S: Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send,
        K: Resource + Send,
        K::DynamicType: Default,
    {
        self.metrics.register_watch(name);
        let (metrics, backoff) = (self.metrics.clone(), self.backoff.clone());
        events.inspect(move |event| match event {
            // The start of a (re)list, before it is asked for: it says nothing yet.
            Ok(watcher::Event::Init) => {}
            Ok(watcher::Event::Delete(obj)) => {
                metrics.watch_ok(name);
                backoff.reset(&ObjectRef::from_obj(obj).to_string());
            }
            Ok(_) => metrics.watch_ok(name),
            Err(error) => metrics.watch_failed(name, error),
        })
    }

    /// Run controller `name` (the stream of `Controller::run`) until it ends, at shutdown. A
    /// reconcile's failure is said by the controller's error_policy and a watch's by
    /// [`Context::observe`]; this logs a failure of the controller's scheduler, and forgets the
    /// backoff of an object that was gone when its retry came (deleted while a watch was down).
    pub async fn drive<K, E>(
        &self,
        name: &str,
        reconciles: impl Stream<
            Item = Result<(ObjectRef<K>, Action), controller::Error<E, watcher::Error>>,
        >,
    ) where
        K: Resource,
        E: std::error::Error + 'static,
    {
        reconciles
            .for_each(|result| {
                match result {
                    Err(controller::Error::ObjectNotFound(obj)) => {
                        self.backoff.reset(&obj.to_string());
                    }
                    Err(controller::Error::RunnerError(error)) => {
                        tracing::error!(controller = name, %error, "the controller's scheduler failed");
                    }
                    _ => {}
                }
                std::future::ready(())
            })
            .await
    }
}

/// The stores of the objects the controllers keep in memory, one per kind, filled while a
/// controller of this replica watches them (only the leader runs the controllers).
#[derive(Clone, Default)]
pub struct Caches {
    stores: Arc<Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>>,
}

impl Caches {
    fn lock(&self) -> MutexGuard<'_, HashMap<TypeId, Box<dyn Any + Send + Sync>>> {
        self.stores.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keep `store`, the objects of kind `K` a controller watches.
    pub fn insert<K>(&self, store: Store<K>)
    where
        K: Resource + Clone + Send + Sync + 'static,
        K::DynamicType: Eq + Hash + Clone + Send + Sync,
    {
        self.lock().insert(TypeId::of::<K>(), Box::new(store));
    }

    /// The objects of kind `K` a controller of this replica watches (those its watch selects),
    /// once its first list is in: `None` before, for a kind no controller watches, and on a
    /// standby replica. A cache is as fresh as the last change its watch delivered.
    pub fn get<K>(&self) -> Option<Store<K>>
    where
        K: Resource + Clone + Send + Sync + 'static,
        K::DynamicType: Eq + Hash + Clone + Send + Sync,
    {
        let store = self
            .lock()
            .get(&TypeId::of::<K>())?
            .downcast_ref::<Store<K>>()?
            .clone();
        let listed = store.wait_until_ready().now_or_never();
        matches!(listed, Some(Ok(()))).then_some(store)
    }
}

/// What a cached object does without: its managedFields.
fn prune<K: Resource>(obj: &mut K) {
    obj.managed_fields_mut().clear();
}

/// Exponential backoff per object after failed reconciliations, as controller-runtime's rate
/// limiter: 5 ms, doubling with each failure in a row, at most 1000 s; reset by a success.
#[derive(Default)]
pub struct Backoff {
    failures: Mutex<HashMap<String, u32>>,
}

impl Backoff {
    /// The delay before retrying `key` after one more failure.
    pub fn next(&self, key: &str) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let n = failures.entry(key.to_string()).or_default();
        *n = n.saturating_add(1);
        let ms = 5u64.saturating_mul(1u64 << (*n - 1).min(30));
        Duration::from_millis(ms.min(1_000_000))
    }

    /// Forget the failures of `key`: after a success, or once the object is gone.
    pub fn reset(&self, key: &str) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }
}

/// Whether the manager is ready (`/readyz`): every check passes. The checks are the webhook
/// server's (listening) and the shutdown's (not begun). The controllers' watches are not among
/// them: a manager whose watch fails still answers its webhooks (see [`Context::observe`]).
#[derive(Default)]
pub struct Health {
    /// Check name -> why it fails (`None`: it passes).
    checks: Mutex<BTreeMap<String, Option<String>>>,
}

impl Health {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Option<String>>> {
        self.checks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Record the outcome of check `name`.
    pub fn set(&self, name: &str, failure: Option<String>) {
        self.lock().insert(name.to_string(), failure);
    }

    /// `Ok` when every check passes, or each failing check and why.
    pub fn readiness(&self) -> Result<(), Vec<String>> {
        let failing: Vec<String> = self
            .lock()
            .iter()
            .filter_map(|(name, failure)| failure.as_ref().map(|why| format!("{name}: {why}")))
            .collect();
        if failing.is_empty() {
            Ok(())
        } else {
            Err(failing)
        }
    }
}

type Labels = Vec<(String, String)>;

/// The buckets of controller-runtime's reconcile-time histogram, in seconds.
const TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

fn time_histogram() -> Durations {
    Durations::new(TIME_BUCKETS.into_iter())
}

/// The results a reconciliation is counted under, as controller-runtime's `result` label.
const RESULTS: [&str; 4] = ["success", "error", "requeue", "requeue_after"];

/// The buckets of controller-runtime's workqueue histograms: 10 ns to 1000 s, by tens.
const WORK_BUCKETS: [f64; 12] = [
    1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0,
];

fn work_histogram() -> Histogram {
    Histogram::new(WORK_BUCKETS)
}

/// Prometheus metrics of the controllers, served on /metrics, named and labelled as
/// controller-runtime's so that its dashboards and alerts work: the reconciles, the worker
/// limit, and of its workqueue metrics those kube-rs lets a controller see (the items handed to
/// the controller, the retries, the time each item is worked on, the work under way). kube-rs's
/// scheduler keeps its queue to itself: there is no `workqueue_depth` or
/// `workqueue_queue_duration_seconds`. With them, the failures of the watches (label `watch`),
/// the process's own (CPU, memory, file descriptors) and the tokio runtime's tasks.
pub struct Metrics {
    registry: Registry,
    reconciles: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    times: Family<Labels, Durations, fn() -> Durations>,
    active: Family<Labels, Gauge>,
    workers: Family<Labels, Gauge>,
    watch_errors: Family<Labels, Counter>,
    watch_failing: Family<Labels, Gauge>,
    /// How many watches fail, so that a delivering watch costs no lock while none does.
    watches_failing: AtomicUsize,
    adds: Family<Labels, Counter>,
    retries: Family<Labels, Counter>,
    work: Family<Labels, Histogram, fn() -> Histogram>,
    /// The reconciliations under way: (controller, number) -> when it started.
    running: Arc<Mutex<BTreeMap<(String, u64), Instant>>>,
    next: AtomicU64,
    controllers: Arc<Mutex<BTreeSet<String>>>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        let mut registry = Registry::default();
        let reconciles = Family::<Labels, Counter>::default();
        let errors = Family::<Labels, Counter>::default();
        let times =
            Family::<Labels, Durations, fn() -> Durations>::new_with_constructor(time_histogram);
        let active = Family::<Labels, Gauge>::default();
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            reconciles.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            times.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            active.clone(),
        );
        let workers = Family::<Labels, Gauge>::default();
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            workers.clone(),
        );
        let watch_errors = Family::<Labels, Counter>::default();
        let watch_failing = Family::<Labels, Gauge>::default();
        registry.register(
            "controller_watch_errors",
            "Total number of errors of each watch of the controllers",
            watch_errors.clone(),
        );
        registry.register(
            "controller_watch_failing",
            "Whether a watch of the controllers fails (1) or delivers (0)",
            watch_failing.clone(),
        );
        let adds = Family::<Labels, Counter>::default();
        let retries = Family::<Labels, Counter>::default();
        let work =
            Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(work_histogram);
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            adds.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            retries.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            work.clone(),
        );
        let running = Arc::new(Mutex::new(BTreeMap::new()));
        let controllers = Arc::new(Mutex::new(BTreeSet::new()));
        registry.register_collector(Box::new(Running {
            running: running.clone(),
            controllers: controllers.clone(),
        }));
        registry.register_collector(Box::new(Process));
        Metrics {
            registry,
            reconciles,
            errors,
            times,
            active,
            workers,
            watch_errors,
            watch_failing,
            watches_failing: AtomicUsize::new(0),
            adds,
            retries,
            work,
            running,
            next: AtomicU64::new(0),
            controllers,
        }
    }
}

/// The workqueue gauges of the reconciliations under way, read at each scrape: 0 for a
/// controller without any.
#[derive(Debug)]
struct Running {
    running: Arc<Mutex<BTreeMap<(String, u64), Instant>>>,
    controllers: Arc<Mutex<BTreeSet<String>>>,
}

impl Collector for Running {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        // controller -> (seconds of work under way, the longest of them)
        let mut by_controller: BTreeMap<String, (f64, f64)> = self
            .controllers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|name| (name.clone(), (0.0, 0.0)))
            .collect();
        for ((name, _), started) in self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let seconds = started.elapsed().as_secs_f64();
            let entry = by_controller.entry(name.clone()).or_default();
            entry.0 += seconds;
            entry.1 = entry.1.max(seconds);
        }
        for (metric, help, longest) in [
            (
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress",
                false,
            ),
            (
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running",
                true,
            ),
        ] {
            let gauge = ConstGauge::new(0.0);
            let mut family = encoder.encode_descriptor(metric, help, None, gauge.metric_type())?;
            for (name, (total, max)) in &by_controller {
                let labels = vec![("name".to_string(), name.clone())];
                let value = if longest { *max } else { *total };
                ConstGauge::new(value).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

/// The process's metrics, named as Prometheus's client libraries name them, and the tokio
/// runtime's tasks, read at each scrape (from /proc: Linux only).
#[derive(Debug)]
struct Process;

/// /proc/self/stat counts CPU time in USER_HZ ticks, 100 a second on Linux.
const TICKS_PER_SECOND: f64 = 100.0;

/// The value of `key` (`VmRSS:`) in /proc/self/status, in bytes.
fn status_bytes(status: &str, key: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kib: f64 = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024.0)
}

/// The CPU seconds (user and system) of /proc/self/stat.
fn cpu_seconds(stat: &str) -> Option<f64> {
    // The fields after the command name, which may hold spaces and ends with the last `)`.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / TICKS_PER_SECOND)
}

/// The soft limit of open files in /proc/self/limits.
fn max_fds(limits: &str) -> Option<f64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

impl Collector for Process {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        if let Some(seconds) = cpu_seconds(&read("/proc/self/stat")) {
            let counter = ConstCounter::new(seconds);
            counter.encode(encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds",
                None,
                counter.metric_type(),
            )?)?;
        }
        let status = read("/proc/self/status");
        let open = std::fs::read_dir("/proc/self/fd")
            .map(|d| d.count() as f64)
            .ok();
        let tasks = tokio::runtime::Handle::try_current()
            .map(|h| h.metrics().num_alive_tasks() as f64)
            .ok();
        for (metric, help, value) in [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                status_bytes(&status, "VmRSS:"),
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes",
                status_bytes(&status, "VmSize:"),
            ),
            ("process_open_fds", "Number of open file descriptors", open),
            (
                "process_max_fds",
                "Maximum number of open file descriptors",
                max_fds(&read("/proc/self/limits")),
            ),
            (
                "tokio_alive_tasks",
                "Number of tasks of the manager's tokio runtime that are alive",
                tasks,
            ),
        ] {
            if let Some(value) = value {
                let gauge = ConstGauge::new(value);
                gauge.encode(encoder.encode_descriptor(
                    metric,
                    help,
                    None,
                    gauge.metric_type(),
                )?)?;
            }
        }
        Ok(())
    }
}

fn controller_label(name: &str) -> Labels {
    vec![("controller".to_string(), name.to_string())]
}

/// The `name` label of controller-runtime's workqueue metrics: the controller's name.
fn queue_label(name: &str) -> Labels {
    vec![("name".to_string(), name.to_string())]
}

/// The `watch` label of the watches' metrics: the controller's name, or the name of a watch of
/// what it owns.
fn watch_label(name: &str) -> Labels {
    vec![("watch".to_string(), name.to_string())]
}

fn result_labels(name: &str, result: &str) -> Labels {
    vec![
        ("controller".to_string(), name.to_string()),
        ("result".to_string(), result.to_string()),
    ]
}

/// The `result` label of a reconciliation, as controller-runtime's.
fn result_label<E>(result: &Result<Action, E>) -> &'static str {
    match result {
        Err(_) => "error",
        Ok(action) if *action == Action::await_change() => "success",
        Ok(action) if *action == Action::requeue(Duration::ZERO) => "requeue",
        Ok(_) => "requeue_after",
    }
}

impl Metrics {
    /// Register controller `name`, which runs at most `workers` reconciles at once: its series
    /// start at zero, as controller-runtime's do. Returns false, and says so, when another
    /// controller has the name already.
    pub fn register(&self, name: &str, workers: u16) -> bool {
        let new = self
            .controllers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string());
        if !new {
            tracing::error!(
                controller = name,
                "two controllers have this name: their metrics and logs mix; give one another NAME"
            );
        }
        for result in RESULTS {
            self.reconciles
                .get_or_create(&result_labels(name, result))
                .inc_by(0);
        }
        self.errors.get_or_create(&controller_label(name)).inc_by(0);
        self.active.get_or_create(&controller_label(name)).inc_by(0);
        self.workers
            .get_or_create(&controller_label(name))
            .set(i64::from(workers));
        self.adds.get_or_create(&queue_label(name)).inc_by(0);
        self.retries.get_or_create(&queue_label(name)).inc_by(0);
        new
    }

    /// Register watch `name`: its series start at zero.
    pub fn register_watch(&self, name: &str) {
        let labels = watch_label(name);
        self.watch_errors.get_or_create(&labels).inc_by(0);
        self.watch_failing.get_or_create(&labels).inc_by(0);
    }

    /// Watch `name` failed: counted, and said when it starts failing.
    pub fn watch_failed(&self, name: &str, error: &watcher::Error) {
        let labels = watch_label(name);
        self.watch_errors.get_or_create(&labels).inc();
        if self.watch_failing.get_or_create(&labels).set(1) == 0 {
            self.watches_failing.fetch_add(1, Ordering::Relaxed);
            tracing::error!(
                watch = name,
                %error,
                "a watch fails: its controller sees no change of these objects until it recovers (retried with backoff)"
            );
        }
    }

    /// Watch `name` delivered: said when it recovers.
    pub fn watch_ok(&self, name: &str) {
        if self.watches_failing.load(Ordering::Relaxed) == 0 {
            return;
        }
        if self.watch_failing.get_or_create(&watch_label(name)).set(0) == 1 {
            self.watches_failing.fetch_sub(1, Ordering::Relaxed);
            tracing::info!(watch = name, "the watch recovered");
        }
    }

    /// An object that changed was handed to controller `name`.
    pub fn added(&self, name: &str) {
        self.adds.get_or_create(&queue_label(name)).inc();
    }

    /// Start one reconciliation of `controller`: counted as an active worker until it is
    /// finished (or dropped).
    pub fn start(&self, controller: &str) -> Reconciliation<'_> {
        crate::telemetry::reconciling();
        let labels = controller_label(controller);
        self.active.get_or_create(&labels).inc();
        let started = Instant::now();
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let running = (controller.to_string(), number);
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(running.clone(), started);
        Reconciliation {
            metrics: self,
            labels,
            running,
            started,
        }
    }

    /// The metrics in the OpenMetrics text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// One reconciliation under way, from [`Metrics::start`].
pub struct Reconciliation<'a> {
    metrics: &'a Metrics,
    labels: Labels,
    running: (String, u64),
    started: Instant,
}

impl Reconciliation<'_> {
    /// Count the reconciliation under its result, and the time it took.
    pub fn finish<E>(self, result: &Result<Action, E>) {
        crate::telemetry::reconciled(result_label(result));
        let name = &self.labels[0].1;
        self.metrics
            .reconciles
            .get_or_create(&result_labels(name, result_label(result)))
            .inc();
        if result.is_err() {
            self.metrics.errors.get_or_create(&self.labels).inc();
        }
        let seconds = self.started.elapsed().as_secs_f64();
        self.metrics
            .times
            .get_or_create(&self.labels)
            .observe(seconds, exemplar(), None);
        let queue = queue_label(name);
        self.metrics.work.get_or_create(&queue).observe(seconds);
        // Back in the queue: after a failure or an immediate requeue with backoff (a retry, as
        // controller-runtime's rate-limited add), or after the delay asked for.
        match result_label(result) {
            "error" | "requeue" => {
                self.metrics.retries.get_or_create(&queue).inc();
                self.metrics.adds.get_or_create(&queue).inc();
            }
            "requeue_after" => {
                self.metrics.adds.get_or_create(&queue).inc();
            }
            _ => {}
        }
    }
}

impl Drop for Reconciliation<'_> {
    fn drop(&mut self) {
        self.metrics.active.get_or_create(&self.labels).dec();
        self.metrics
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.running);
    }
}

/// How the logs are written (`--zap-encoder`, named as the Go manager's flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line of text per entry; coloured only on a terminal without NO_COLOR.
    Console,
    /// One JSON object per line, for a log collector.
    Json,
}

/// The tracing filter of a `--zap-log-level` value: zap's levels (`debug`, `info`, `error`,
/// `panic`, or a verbosity such as `2`: more verbose than debug), tracing's (`trace`, `warn`), or
/// a `RUST_LOG` directive such as `info,kube=debug`.
pub fn log_filter(level: &str) -> String {
    match level.trim() {
        "panic" | "dpanic" | "fatal" => "error".to_string(),
        level => match level.parse::<u8>() {
            Ok(0) => "info".to_string(),
            Ok(1) => "debug".to_string(),
            Ok(_) => "trace".to_string(),
            Err(_) => level.to_string(),
        },
    }
}

/// Whether log lines are coloured: only on a terminal, and not when NO_COLOR is set
/// (no-color.org), so that a pod's logs and a pipe get plain text.
pub fn colour(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// Log to stderr, as the Go manager does: at `level` (`--zap-log-level`), else as RUST_LOG says,
/// else at info.
pub fn init_logging(format: LogFormat, level: Option<&str>) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = match level {
        Some(level) => EnvFilter::try_new(log_filter(level))
            .map_err(|e| anyhow::anyhow!("--zap-log-level {level:?}: {e}; for example: info"))?,
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
    };
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => logs.json().init(),
        LogFormat::Console => {
            let ansi = colour(
                std::io::stderr().is_terminal(),
                std::env::var_os("NO_COLOR").as_deref(),
            );
            logs.with_ansi(ansi).init()
        }
    }
    Ok(())
}

/// Resolves on SIGTERM (Kubernetes stopping the pod) or Ctrl-C.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
    tracing::info!("shutting down");
}

/// A shutdown signal every controller can wait on.
pub type Shutdown = futures::future::Shared<futures::future::BoxFuture<'static, ()>>;

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    #[test]
    fn reconciles_are_counted_under_controller_runtimes_result_label() {
        let metrics = Metrics::default();
        assert!(metrics.register("webapp-guestbook", 4));
        metrics
            .start("webapp-guestbook")
            .finish::<()>(&Ok(Action::await_change()));
        metrics
            .start("webapp-guestbook")
            .finish::<()>(&Ok(Action::requeue(Duration::from_secs(60))));
        metrics.start("webapp-guestbook").finish(&Err(()));
        let text = metrics.render();
        for line in [
            r#"controller_runtime_reconcile_total{controller="webapp-guestbook",result="success"} 1"#,
            r#"controller_runtime_reconcile_total{controller="webapp-guestbook",result="requeue_after"} 1"#,
            r#"controller_runtime_reconcile_total{controller="webapp-guestbook",result="error"} 1"#,
            r#"controller_runtime_reconcile_total{controller="webapp-guestbook",result="requeue"} 0"#,
            r#"controller_runtime_reconcile_errors_total{controller="webapp-guestbook"} 1"#,
            r#"controller_runtime_active_workers{controller="webapp-guestbook"} 0"#,
            r#"controller_runtime_max_concurrent_reconciles{controller="webapp-guestbook"} 4"#,
            r#"controller_runtime_reconcile_time_seconds_count{controller="webapp-guestbook"} 3"#,
        ] {
            assert!(text.lines().any(|l| l == line), "no {line} in:\n{text}");
        }
    }

    #[test]
    fn the_workqueue_metrics_count_adds_retries_and_work() {
        let metrics = Metrics::default();
        metrics.register("webapp-guestbook", 4);
        metrics.added("webapp-guestbook");
        metrics.start("webapp-guestbook").finish(&Err(()));
        metrics
            .start("webapp-guestbook")
            .finish::<()>(&Ok(Action::await_change()));
        let running = metrics.start("webapp-guestbook");
        let text = metrics.render();
        for line in [
            r#"workqueue_adds_total{name="webapp-guestbook"} 2"#,
            r#"workqueue_retries_total{name="webapp-guestbook"} 1"#,
            r#"workqueue_work_duration_seconds_count{name="webapp-guestbook"} 2"#,
        ] {
            assert!(text.lines().any(|l| l == line), "no {line} in:\n{text}");
        }
        for metric in [
            "workqueue_unfinished_work_seconds{name=\"webapp-guestbook\"} ",
            "workqueue_longest_running_processor_seconds{name=\"webapp-guestbook\"} ",
        ] {
            assert!(
                text.lines().any(|l| l.starts_with(metric)),
                "no {metric} in:\n{text}"
            );
        }
        drop(running);
        let idle = r#"workqueue_unfinished_work_seconds{name="webapp-guestbook"} 0.0"#;
        let text = metrics.render();
        assert!(text.lines().any(|l| l == idle), "no {idle} in:\n{text}");
    }

    #[test]
    fn the_process_metrics_read_proc() {
        let stat = "12 (a (b) c) S 1 12 12 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 99 0";
        assert_eq!(cpu_seconds(stat), Some(3.0));
        let status = "Name:\tmanager\nVmSize:\t   2048 kB\nVmRSS:\t    512 kB\n";
        assert_eq!(status_bytes(status, "VmRSS:"), Some(512.0 * 1024.0));
        assert_eq!(status_bytes(status, "VmSize:"), Some(2048.0 * 1024.0));
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 4096                 files\n";
        assert_eq!(max_fds(limits), Some(1024.0));
        if cfg!(target_os = "linux") {
            let text = Metrics::default().render();
            for metric in [
                "process_cpu_seconds_total ",
                "process_resident_memory_bytes ",
                "process_open_fds ",
            ] {
                assert!(
                    text.lines().any(|l| l.starts_with(metric)),
                    "no {metric} in:\n{text}"
                );
            }
        }
    }

    #[test]
    fn a_reconciliation_under_way_is_an_active_worker() {
        let metrics = Metrics::default();
        let running = metrics.start("apps-deployment");
        let line = r#"controller_runtime_active_workers{controller="apps-deployment"} 1"#;
        assert!(metrics.render().lines().any(|l| l == line));
        drop(running);
        let line = r#"controller_runtime_active_workers{controller="apps-deployment"} 0"#;
        assert!(metrics.render().lines().any(|l| l == line));
    }

    #[test]
    fn a_second_controller_of_the_same_name_is_refused() {
        let metrics = Metrics::default();
        assert!(metrics.register("core-event", 1));
        assert!(metrics.register("webapp-event", 1));
        assert!(!metrics.register("core-event", 1));
    }

    /// A context whose client talks to a mocked API server that answers nothing.
    fn context() -> Context {
        let (service, _) = tower_test::mock::pair::<
            http::Request<kube::client::Body>,
            http::Response<kube::client::Body>,
        >();
        Context::new(Client::new(service, "default"), Arc::default())
    }

    fn config_map(name: &str) -> ConfigMap {
        let mut obj = ConfigMap::default();
        obj.metadata.name = Some(name.into());
        obj.metadata.namespace = Some("default".into());
        obj
    }

    #[tokio::test]
    async fn a_failing_watch_is_counted_and_leaves_the_manager_ready() {
        let ctx = context();
        let error = || Err::<watcher::Event<ConfigMap>, _>(watcher::Error::NoResourceVersion);
        let events = futures::stream::iter(vec![
            error(),
            error(),
            Ok(watcher::Event::InitDone),
            error(),
        ]);
        let seen: Vec<_> = ctx.observe("webapp-guestbook", events).collect().await;
        assert_eq!(seen.len(), 4);
        let text = ctx.metrics.render();
        for line in [
            r#"controller_watch_errors_total{watch="webapp-guestbook"} 3"#,
            r#"controller_watch_failing{watch="webapp-guestbook"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "no {line} in:\n{text}");
        }
        ctx.metrics.watch_ok("webapp-guestbook");
        let line = r#"controller_watch_failing{watch="webapp-guestbook"} 0"#;
        assert!(ctx.metrics.render().lines().any(|l| l == line));
        // Readiness knows nothing of the watches.
        assert_eq!(Health::default().readiness(), Ok(()));
    }

    #[tokio::test]
    async fn the_backoff_of_a_deleted_object_is_forgotten() {
        let ctx = context();
        let gone = config_map("gone");
        let key = ObjectRef::from_obj(&gone).to_string();
        let first = ctx.backoff.next(&key);
        assert!(ctx.backoff.next(&key) > first);
        let events = futures::stream::iter(vec![Ok(watcher::Event::Delete(gone))]);
        let _: Vec<_> = ctx.observe("core-configmap", events).collect().await;
        assert_eq!(ctx.backoff.next(&key), first, "the failures were kept");
        // An object found gone when its retry comes, likewise.
        let missed = config_map("missed");
        let key = ObjectRef::from_obj(&missed).to_string();
        ctx.backoff.next(&key);
        let erased = Box::new(ObjectRef::from_obj(&missed).erase());
        let results = futures::stream::iter(vec![Err(controller::Error::<
            std::io::Error,
            watcher::Error,
        >::ObjectNotFound(erased))]);
        ctx.drive::<ConfigMap, _>("core-configmap", results).await;
        assert_eq!(ctx.backoff.next(&key), first, "the failures were kept");
    }

    #[tokio::test]
    async fn a_watched_kind_is_cached_once_listed() {
        let ctx = context();
        assert!(ctx.caches.get::<ConfigMap>().is_none());
        let (reader, mut writer) = reflector::store::<ConfigMap>();
        ctx.caches.insert(reader);
        assert!(
            ctx.caches.get::<ConfigMap>().is_none(),
            "a cache before its first list"
        );
        writer.apply_watcher_event(&watcher::Event::InitApply(config_map("listed")));
        writer.apply_watcher_event(&watcher::Event::InitDone);
        let cached = ctx.caches.get::<ConfigMap>().expect("a cache once listed");
        assert_eq!(cached.state().len(), 1);
        assert!(
            ctx.caches
                .get::<k8s_openapi::api::core::v1::Secret>()
                .is_none()
        );
    }

    #[tokio::test]
    async fn each_controller_reconciles_a_bounded_number_of_objects_at_once() {
        let ctx = context();
        assert_eq!(
            ctx.max_concurrent_reconciles,
            crate::controllers::MAX_CONCURRENT_RECONCILES
        );
        assert!(ctx.max_concurrent_reconciles >= 1);
        assert_eq!(ctx.reconciling_at_once(0).max_concurrent_reconciles, 1);
        let config = format!("{:?}", context().reconciling_at_once(2).controller_config());
        assert!(config.contains("concurrency: 2"), "{config}");
    }

    #[test]
    fn the_checks_fail_and_pass_independently() {
        let health = Health::default();
        health.set("webhooks", Some("not listening yet".into()));
        health.set("shutdown", Some("shutting down".into()));
        health.set("webhooks", None);
        assert_eq!(
            health.readiness(),
            Err(vec!["shutdown: shutting down".to_string()])
        );
    }

    #[test]
    fn log_levels_read_as_zap_and_rust_log_do() {
        assert_eq!(log_filter("debug"), "debug");
        assert_eq!(log_filter("panic"), "error");
        assert_eq!(log_filter("1"), "debug");
        assert_eq!(log_filter("3"), "trace");
        assert_eq!(log_filter("info,kube=debug"), "info,kube=debug");
    }

    #[test]
    fn logs_are_coloured_only_on_a_terminal_without_no_color() {
        let set = std::ffi::OsStr::new("1");
        assert!(colour(true, None));
        assert!(!colour(false, None));
        assert!(!colour(true, Some(set)));
        assert!(colour(true, Some(std::ffi::OsStr::new(""))));
    }

    #[test]
    fn cached_objects_keep_no_managed_fields() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
        let mut obj = ConfigMap::default();
        obj.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
        obj.metadata.name = Some("kept".into());
        prune(&mut obj);
        assert!(obj.managed_fields().is_empty());
        assert_eq!(obj.name_any(), "kept");
    }
}
