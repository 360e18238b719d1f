;;; eglot.el --- zerolint server with eglot: docs/editors.md, "## Emacs (eglot)".
;; eglot is built into Emacs 29+; on Emacs 28 it is the eglot package (Debian: elpa-eglot).
;; Emacs 28 opens a .json file in js-mode (js-json-mode is 29+), hence js-mode in the list.
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((js-mode js-json-mode json-mode json-ts-mode yaml-mode yaml-ts-mode) . ("zerolint" "server"))))
