// The zerolint dev extension for Zed (docs/editors.md, "## Zed"): start the `zerolint` found on the worktree's
// PATH as `zerolint server`. Written from the zed_extension_api 0.7.0 documentation; not built here.
use zed_extension_api::{self as zed, LanguageServerId, Result};

struct Zerolint;

impl zed::Extension for Zerolint {
    fn new() -> Self {
        Zerolint
    }

    fn language_server_command(&mut self, _id: &LanguageServerId, worktree: &zed::Worktree) -> Result<zed::Command> {
        let command = worktree
            .which("zerolint")
            .ok_or_else(|| "zerolint is not on the worktree's PATH (pip install 'zerolint[lsp]')".to_string())?;
        Ok(zed::Command { command, args: vec!["server".to_string()], env: worktree.shell_env() })
    }
}

zed::register_extension!(Zerolint);
