pub mod api;
pub mod init;
