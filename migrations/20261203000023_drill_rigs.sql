-- A drill's products are its rig's, not the sale's (issue 26): `rig` is the drill run that put
-- the product on sale (NULL: the sale's own). A sale's engines sell, persist, close and relay
-- only products with no rig; a drill's engines only their rig's. A drill's breakers escalate to
-- the switch row `rig:<run id>` and its guided exit leads that row back, so a drill never
-- degrades, pauses or rebuilds the sale it runs beside.
ALTER TABLE inventory
    ADD COLUMN rig BIGINT UNSIGNED NULL,
    ADD KEY idx_inventory_rig (rig);

-- Which products an engine sells (`global`: the sale's; `rig:<run id>`: a drill's): the guided
-- exit of one waits for, and is refused by, only the engines that sell its products.
ALTER TABLE engine_heartbeats
    ADD COLUMN home VARCHAR(64) NOT NULL DEFAULT 'global';
