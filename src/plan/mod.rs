//! Plans and their transactional application.
//!
//! A command never touches the disk itself: it returns a [`Plan`] ([`data`]). [`apply`]
//! ([`mod@apply`]) computes every resulting file in memory ([`edit`] applies the edits, [`paths`]
//! checks where they go), leaves out the [`Part`]s whose file or marker is missing (`manual`
//! says what to add by hand instead), collects every conflict before writing a byte, and
//! reports ([`report`]); then [`transaction`] writes each changed file atomically (temp file in the same
//! directory + rename), PROJECT last. If any write fails it restores every file it touched and
//! removes the files and directories it created, so the tree is byte-identical to before.
//! [`undo`] plans the reverse of a `create` plan, as the files are now (for `delete`).

pub mod apply;
pub mod data;
pub mod edit;
mod manual;
pub mod paths;
pub mod report;
pub mod transaction;
pub mod undo;

pub use apply::{apply, ApplyOptions};
pub use data::{Edit, IfExists, Next, Op, Part, Plan};
