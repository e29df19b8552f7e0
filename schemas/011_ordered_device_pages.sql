-- Audience pages (`Store.devicesPage`, `Store.devicesPageBoundary`) of `all` and `topic` jobs walk the primary key
-- in token order whatever the statistics say. They were one statement planned with its parameters each time; with
-- the statistics of an empty devices table (a new deployment, or a bulk import not yet analysed), the planner
-- estimated a page at a few dozen rows and read every device of the app after the cursor with a bitmap scan, then
-- sorted them to keep the first page: each page cost the rest of the app, and a broadcast the square of its size
-- (a 300,000-device broadcast straight after an import was 2-4x slower in some runs). With sorting disabled, the
-- only plan left is the ordered walk of devices_pkey from the cursor, which stops after a page. A topic is filtered
-- on that walk: all the pages of a job together read the app's devices once at most, however rare the topic (with
-- good statistics the planner read a rare topic through devices_by_topic instead, faster for a few devices, but
-- then every page reads all the topic's devices after the cursor).
--
-- Pages of a `users` job stay in Swift: a probe of devices_by_user per user, then a sort of those few devices.

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

-- One keyset page of an app's devices in token order: `page_after < token ≤ page_through` (no upper bound when
-- page_through is NULL), at most page_size rows, narrowed to a topic and to locales when they are not NULL. The
-- bounded and the open page are two statements, so that page_through is an index condition of the walk and not
-- a filter that lets it run on past the range.
CREATE FUNCTION herald_devices_page(
    page_app text, page_after text, page_through text, page_topic text, page_locales text[], page_size bigint)
RETURNS TABLE (token text, locale text, registered_at_micros bigint, environment text)
LANGUAGE plpgsql STABLE
SET enable_sort = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    IF page_through IS NULL THEN
        RETURN QUERY
            SELECT d.token, d.locale, (extract(epoch FROM d.registered_at) * 1000000)::bigint, d.environment
            FROM devices d
            WHERE d.app_id = page_app AND d.token > page_after
              AND (page_topic IS NULL OR d.topics @> ARRAY[page_topic])
              AND (page_locales IS NULL OR herald_locale_matches(d.locale, page_locales))
            ORDER BY d.token LIMIT page_size;
    ELSE
        RETURN QUERY
            SELECT d.token, d.locale, (extract(epoch FROM d.registered_at) * 1000000)::bigint, d.environment
            FROM devices d
            WHERE d.app_id = page_app AND d.token > page_after AND d.token <= page_through
              AND (page_topic IS NULL OR d.topics @> ARRAY[page_topic])
              AND (page_locales IS NULL OR herald_locale_matches(d.locale, page_locales))
            ORDER BY d.token LIMIT page_size;
    END IF;
END
$$;
