//! oomlint's own configuration (`oomlint.toml`, `[tool.oomlint]`) has no training plan;
//! it is read by `crate::settings`.
