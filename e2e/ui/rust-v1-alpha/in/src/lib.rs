//! The ui operator: its API types, its controllers and the manager that runs them.

pub mod api;
pub mod controllers;
pub mod leader_election;
pub mod manager;
pub mod rbac;
pub mod server;
pub mod tls;
pub mod webhook;
pub mod webhooks;
