//! Units with fio rules.
