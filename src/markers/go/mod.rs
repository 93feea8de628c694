//! Edits of Go files: where a marker may take code ([`placement`]), imports placed where gofmt
//! keeps them ([`imports`]), and comment tags above a type declaration ([`tags`]).

pub mod imports;
pub mod placement;
pub mod tags;
