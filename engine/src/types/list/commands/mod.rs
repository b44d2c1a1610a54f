//! The list commands.
