-- 9: a site's robots.txt gone (4xx), unreachable (no answer, 429, 5xx) or
-- moved (a redirect that ended nowhere) is a version of its own: an empty
-- body with this mark. NULL: a file.
ALTER TABLE versions ADD COLUMN absent TEXT;
