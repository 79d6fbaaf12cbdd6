-- Delivery bodies are large (a user op carries its bundle transaction's whole input) and written
-- once, read on every attempt: lz4 compresses them several times faster than the default pglz.
-- Builds without lz4 (PGlite) keep pglz.
do $$
begin
  alter table webhook_deliveries alter column body set compression lz4;
exception when others then
  null;
end $$;
