//! Shared planning: what the plugins have in common, below every one of them. The plugin API
//! ([`plugin`]: the `Plugin` trait and the context a hook works on), the requests each command
//! hands its chain (its parsed flags), resolving a resource or a webhook from those flags and
//! PROJECT and recording it there, the license header, and the post-steps. Nothing here knows a
//! particular plugin beyond the flags it takes; nothing here imports a plugin, the chain or a
//! command (src/architecture.rs checks it).

pub mod api;
pub mod delete;
pub mod delete_flags;
pub mod edit;
pub mod flags;
pub mod init;
pub mod parts;
pub mod plugin;
pub mod post;
pub mod release;
pub mod uses;
pub mod webhook;
