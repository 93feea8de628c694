//! The integration tests, one test crate: each module was a crate of its own, each linking
//! its own test binary with its own copy of `support`. Run one module with a filter, for example
//! `cargo test --test e2e golden::` or `OPBUILDER_BLESS=1 cargo test --test e2e ui::`.

mod support;

mod cli;
mod delete;
mod delete_flags;
mod delete_order;
mod deployimage;
mod docs;
mod external;
mod faults;
mod firsthour;
mod generate;
mod golden;
mod plugins;
mod rust;
mod shapes;
mod ssa;
mod typed_clients;
mod ui;
mod update;
