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

//! The guestbook operator: its API types, its controllers and the manager that runs them.

pub mod api;
pub mod controllers;
pub mod leader_election;
pub mod local_webhooks;
pub mod manager;
pub mod rbac;
pub mod server;
pub mod telemetry;
pub mod tls;
pub mod webhook;
pub mod webhooks;
