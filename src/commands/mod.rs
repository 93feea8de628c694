pub mod api;
pub mod edit;
pub mod init;
pub mod webhook;
