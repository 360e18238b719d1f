;;; eglot-collect.el --- test harness, not part of a recipe (tests/test_editor_recipes.py).
;; Open $ZL_FILE (in major mode $ZL_MODE when set), start eglot in it, wait until flymake has eglot's
;; diagnostics, write them as JSON to $ZL_OUT: flymake's region and text, and the LSP diagnostic eglot received.
;; ZL_MODE=json-mode where the json-mode package (MELPA) is not installed: a stand-in major mode of that name, so
;; that eglot's choice of server for a buffer in json-mode is what is tried.
;; ZL_FIXALL=1: then run the source.fixAll.zerolint code action the way docs/editors.md says, and add the
;; buffer's text to the result.
;; Batch mode skips the activation of installed packages (their autoloads: yaml-mode's auto-mode-alist entry)
;; that an interactive Emacs does at startup: do it here.
(package-activate-all)
(require 'json)
(require 'eglot)
(let* ((file (getenv "ZL_FILE"))
       (out (getenv "ZL_OUT"))
       (mode (getenv "ZL_MODE"))
       (timeout (/ (string-to-number (or (getenv "ZL_TIMEOUT_MS") "30000")) 1000.0))
       (deadline (+ (float-time) timeout))
       (stand-in (and (equal mode "json-mode") (not (fboundp 'json-mode))))
       (buf (find-file-noselect file))
       result)
  (when stand-in
    (define-derived-mode json-mode prog-mode "JSON" "Stand-in for the json-mode package (test harness)."))
  (with-current-buffer buf
    (when (and mode (not (string= mode ""))) (funcall (intern mode)))
    (call-interactively #'eglot)
    ;; flymake defers its first check to the next command, and batch mode runs none: start it by hand, then
    ;; again while waiting (eglot hands the diagnostics it holds to the backend flymake calls).
    (while (and (null (flymake-diagnostics)) (< (float-time) deadline))
      (when (bound-and-true-p flymake-mode) (flymake-start))
      (accept-process-output nil 0.05))
    (setq result
          `((emacs . ,emacs-version)
            (eglot . ,(locate-library "eglot"))
            (major_mode . ,(symbol-name major-mode))
            (stand_in . ,(if stand-in t :json-false))
            (server . ,(let ((s (eglot-current-server))) (and s (eglot--project-nickname s))))
            (error . ,(unless (flymake-diagnostics) (format "timeout: no diagnostics after %s s" timeout)))
            (diagnostics
             . ,(vconcat
                 (mapcar (lambda (d)
                           (let ((beg (flymake-diagnostic-beg d)) (end (flymake-diagnostic-end d)))
                             `((line . ,(line-number-at-pos beg t))
                               (column . ,(save-excursion (goto-char beg) (current-column)))
                               (end_line . ,(line-number-at-pos end t))
                               (end_column . ,(save-excursion (goto-char end) (current-column)))
                               (type . ,(symbol-name (flymake-diagnostic-type d)))
                               (text . ,(flymake-diagnostic-text d))
                               (lsp . ,(alist-get 'eglot-lsp-diag (flymake-diagnostic-data d))))))
                         (sort (flymake-diagnostics)
                               (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))))))
    (when (and (flymake-diagnostics) (equal (getenv "ZL_FIXALL") "1"))
      (let ((tick (buffer-chars-modified-tick)))
        (eglot-code-actions (point-min) (point-max) "source.fixAll.zerolint" t)
        (if (= tick (buffer-chars-modified-tick))
            (setf (alist-get 'error result) "the fix-all action did not change the buffer")
          (push (cons 'fixed (buffer-substring-no-properties (point-min) (point-max))) result)))))
  (with-temp-file out (insert (json-encode result)))
  (kill-emacs 0))
