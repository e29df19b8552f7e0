-- The locale test of audience pages, once: `herald_locale_matches(locale, tags)`, used by the pages of `all`,
-- `topic` and `users` jobs (Store.devicesPage). Pages of `all` and `topic` jobs walk devices_pkey in token order with
-- the statistics `herald devices import` leaves (it analyses the table); a PL/pgSQL page function that forced that
-- walk with sorting disabled whatever the statistics was tried and not kept: 0.62x on a 300,000-device broadcast.
-- Pages of a `users` job probe devices_by_user per user, then sort those few devices.

-- Whether a locale falls under one of the normalised tags: `fr` covers `fr`, `fr-CA` and `fr_CA`.
CREATE FUNCTION herald_locale_matches(locale text, tags text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT EXISTS (
        SELECT 1 FROM unnest(tags) AS f(tag)
        WHERE lower(replace(locale, '_', '-')) = f.tag
           OR lower(replace(locale, '_', '-'))
              LIKE replace(replace(replace(f.tag, '\', '\\'), '%', '\%'), '_', '\_') || '-%')
$$;
