-- The rule that made each stored name skeleton (`text::NAME_SKELETON_RULE`):
-- 1, the skeleton of the case-folded name; 2, the skeleton of the name in
-- capitals, folded, then taken again (so "Маrlo" with a Cyrillic capital
-- is "Marlo"). The server makes the skeletons of older rows again at
-- start-up (`AccountStore::rekey_names`).
ALTER TABLE account_names ADD COLUMN rule INTEGER NOT NULL DEFAULT 1;
CREATE INDEX account_names_rule ON account_names (rule);
