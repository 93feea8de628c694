//! The project's lifecycle after it is made: `alpha generate` scaffolds it again from PROJECT,
//! `alpha update` carries it to newer templates by a three-way merge, `alpha check` says whether
//! it is current. Generating replays PROJECT through the plugin chain, as the commands run it.

pub mod generate;
pub mod kubebuilder;
pub mod update;
