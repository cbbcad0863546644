//! Plans and runs workers.
