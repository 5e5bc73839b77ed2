use super::*;
use crate::rules;
use crate::settings::Level;
use crate::versions::Version;
use std::collections::BTreeMap;

fn v(text: &str) -> Version {
    Version::parse(text).unwrap()
}

#[test]
fn settings_are_found_by_walking_up_with_globs_relative_to_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir_all(dir.join("project/experiments/a")).unwrap();
    std::fs::write(dir.join("project/pyproject.toml"), "[project]\nname = \"x\"\n[tool.oomlint]\ngpu = \"L4\"\n[tool.oomlint.per-file-ignores]\n\"experiments/**\" = [\"yaml-syntax\"]\n").unwrap();
    let file = dir.join("project/experiments/a/sft.yaml");
    let settings = Project::default().settings_for(&file).unwrap();
    let rule = rules::find("yaml-syntax").unwrap();
    assert_eq!(settings.gpu.as_deref(), Some("L4"));
    assert_eq!(settings.level(rule, &file), Level::Off);
    assert_eq!(settings.level(rule, &dir.join("project/b.yaml")), Level::Default);
}

#[test]
fn pins_search_stops_at_the_repository_root_and_overrides_win() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let configs = dir.join("repo/configs/grpo");
    std::fs::create_dir_all(&configs).unwrap();
    std::fs::create_dir_all(dir.join("repo/.git")).unwrap();
    std::fs::write(dir.join("requirements.txt"), "trl==0.10\ntorch==2.0\n").unwrap();
    std::fs::write(dir.join("repo/requirements.txt"), "trl==0.19.1\n").unwrap();
    std::fs::write(dir.join("repo/configs/uv.lock"), "[[package]]\nname = \"transformers\"\nversion = \"4.45.2\"\n")
        .unwrap();
    let found = Project::default().versions_for(&configs.join("config.yaml"));
    assert!(!found.at_least("trl", &v("0.20")));
    assert!(!found.at_least("transformers", &v("4.46")));
    assert!(found.get("torch").is_none(), "files above the repository root are not read");
    let overridden = Versions::clone(&found).with_overrides(&BTreeMap::from([("trl".to_string(), v("0.27"))]));
    assert!(overridden.at_least("trl", &v("0.27")));
}

#[test]
fn a_project_reads_each_directory_once_and_a_new_one_sees_changes() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let config = dir.join("sft.yaml");
    let project = Project::default();
    assert!(project.versions_for(&config).get("trl").is_none());
    std::fs::write(dir.join("requirements.txt"), "trl==0.19.1\n").unwrap();
    assert!(project.versions_for(&config).get("trl").is_none(), "remembered for the project's lifetime");
    assert!(Project::default().versions_for(&config).get("trl").is_some(), "a new project reads the disk again");
}
