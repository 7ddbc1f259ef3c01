--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: artifacts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.artifacts (
    cid text NOT NULL,
    size bigint NOT NULL,
    media_type text NOT NULL
);


--
-- Name: braid_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.braid_schema (
    version bigint NOT NULL
);


--
-- Name: builds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.builds (
    id text NOT NULL COLLATE pg_catalog."C",
    workflow_id text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL,
    manifest text NOT NULL,
    targets text NOT NULL,
    state text NOT NULL,
    report text,
    artifacts text,
    created_at bigint NOT NULL
);


--
-- Name: jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.jobs (
    id text NOT NULL,
    build_id text NOT NULL COLLATE pg_catalog."C",
    state text NOT NULL,
    progress text DEFAULT ''::text NOT NULL,
    log text DEFAULT ''::text NOT NULL,
    error text,
    attempts bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    started_at bigint,
    finished_at bigint,
    seq bigint NOT NULL,
    lease_owner text,
    lease_until bigint
);


--
-- Name: jobs_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.jobs_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: jobs_seq_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.jobs_seq_seq OWNED BY public.jobs.seq;


--
-- Name: operations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.operations (
    name text NOT NULL,
    version text NOT NULL,
    version_id text NOT NULL,
    source_cid text NOT NULL,
    registered_at bigint NOT NULL
);


--
-- Name: owners; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.owners (
    name text NOT NULL,
    owner text NOT NULL,
    added_at bigint NOT NULL
);


--
-- Name: packages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.packages (
    ecosystem text NOT NULL,
    name text NOT NULL,
    version text NOT NULL,
    cid text NOT NULL,
    entry text NOT NULL,
    digest text NOT NULL,
    build_id text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: publishes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.publishes (
    id text NOT NULL,
    name text NOT NULL,
    version text NOT NULL,
    version_id text NOT NULL,
    state text NOT NULL,
    progress text DEFAULT ''::text NOT NULL,
    log text DEFAULT ''::text NOT NULL,
    error text,
    attempts bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    started_at bigint,
    finished_at bigint,
    seq bigint NOT NULL,
    lease_owner text,
    lease_until bigint,
    source_cid text
);


--
-- Name: publishes_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.publishes_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: publishes_seq_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.publishes_seq_seq OWNED BY public.publishes.seq;


--
-- Name: jobs seq; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs ALTER COLUMN seq SET DEFAULT nextval('public.jobs_seq_seq'::regclass);


--
-- Name: publishes seq; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.publishes ALTER COLUMN seq SET DEFAULT nextval('public.publishes_seq_seq'::regclass);


--
-- Data for Name: artifacts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.artifacts VALUES ('bafkr4ibg2zohtmz6aawvwc5gveggf7jku5r3mq4wkvwbofjos4zgl7yvgu', 1, 'application/wasm');
INSERT INTO public.artifacts VALUES ('bafkr4iabf36kwpnruy5f2ucrbzepd67tvqtnxuukhtwatfcx572756uwvi', 1, 'application/wasm');


--
-- Data for Name: braid_schema; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.braid_schema VALUES (3);


--
-- Data for Name: builds; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.builds VALUES ('bafkr4ibbdlsv723jzj3egm34qio7ew6osk2s2mwvtqo45ln7xzeexfl6zm', 'bafkr4idoi3orbxx4tnlmfgtoyvvvbdbb6vgaqgjbstsn6jn7g3ymtq6cpe', 'a', '{}', '["native"]', 'succeeded', '{"workflow":"a","id":"bafkr4idoi3orbxx4tnlmfgtoyvvvbdbb6vgaqgjbstsn6jn7g3ymtq6cpe","crate_name":"wf_a","targets":["native"],"timings_ms":{"generate":1},"sizes_bytes":{},"artifacts":{}}', '[{"name":"x.wasm","cid":"bafkr4ibg2zohtmz6aawvwc5gveggf7jku5r3mq4wkvwbofjos4zgl7yvgu","size":1,"media_type":"application/wasm"},{"name":"x.wasm","cid":"bafkr4iabf36kwpnruy5f2ucrbzepd67tvqtnxuukhtwatfcx572756uwvi","size":1,"media_type":"application/wasm"}]', 1795634806);
INSERT INTO public.builds VALUES ('bafkr4ibsnwdclvo4yqszgk67qfp5ytu4eavs3a4x3caeogwkh727i5dzvq', 'bafkr4idoi3orbxx4tnlmfgtoyvvvbdbb6vgaqgjbstsn6jn7g3ymtq6cpe', 'a', '{}', '["node"]', 'building', NULL, NULL, 1795634806);
INSERT INTO public.builds VALUES ('bafkr4idb5l7yo3755wpxkusprsqenw5ilza2ozus5afs6q363zsbq2bzy4', 'bafkr4idoi3orbxx4tnlmfgtoyvvvbdbb6vgaqgjbstsn6jn7g3ymtq6cpe', 'a', '{}', '["web"]', 'building', NULL, NULL, 1795634806);


--
-- Data for Name: jobs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.jobs VALUES ('88819e75dbde431cafba542123fbf9e9', 'bafkr4ibbdlsv723jzj3egm34qio7ew6osk2s2mwvtqo45ln7xzeexfl6zm', 'succeeded', 'done', '', NULL, 1, 1795634806, 1795634806, 1795634806, 1, NULL, 1795634837);
INSERT INTO public.jobs VALUES ('2c76e080ab3a4b2a9bad19454ed695e4', 'bafkr4ibsnwdclvo4yqszgk67qfp5ytu4eavs3a4x3caeogwkh727i5dzvq', 'running', 'starting', '', NULL, 1, 1795634806, 1795634806, NULL, 2, 'vm:4850:a9779170', 1795634837);
INSERT INTO public.jobs VALUES ('56e322159509490bb175520ab20b98ec', 'bafkr4idb5l7yo3755wpxkusprsqenw5ilza2ozus5afs6q363zsbq2bzy4', 'queued', '', '', NULL, 0, 1795634806, NULL, NULL, 3, NULL, NULL);


--
-- Data for Name: operations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.operations VALUES ('op_x', '0.1.0', 'bafkr4ix', 'bafkr4ihqhcmnsw3phnhu63g72xk5casaqh5ukrkjk5gadqxyig6myy5io4', 1795634806);


--
-- Data for Name: owners; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.owners VALUES ('op_x', 'alice', 1795634806);


--
-- Data for Name: packages; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.packages VALUES ('cargo', 'wf_a', '0.1.0', 'bafkr4iabf36kwpnruy5f2ucrbzepd67tvqtnxuukhtwatfcx572756uwvi', '{}', 'd1', 'bafkr4ibbdlsv723jzj3egm34qio7ew6osk2s2mwvtqo45ln7xzeexfl6zm', 1795634806);


--
-- Data for Name: publishes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.publishes VALUES ('00000000000000000000000000000001', 'op_x', '0.1.0', 'bafkr4ix', 'succeeded', 'registered', 'built', NULL, 1, 1795634806, 1795634806, 1795634806, 1, NULL, 1795634837, 'bafkr4ihqhcmnsw3phnhu63g72xk5casaqh5ukrkjk5gadqxyig6myy5io4');
INSERT INTO public.publishes VALUES ('17457417869a46788eb2f27a770ea9c7', 'op_y', '0.2.0', 'bafkr4iy', 'queued', '', '', NULL, 0, 1795634806, NULL, NULL, 2, NULL, NULL, 'bafkr4ifuyvvqhz2gmxmnhjqrdqb4kfnirv6zwdaclyd6tkuzal7smh45jm');


--
-- Name: jobs_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.jobs_seq_seq', 3, true);


--
-- Name: publishes_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.publishes_seq_seq', 2, true);


--
-- Name: artifacts artifacts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.artifacts
    ADD CONSTRAINT artifacts_pkey PRIMARY KEY (cid);


--
-- Name: builds builds_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.builds
    ADD CONSTRAINT builds_pkey PRIMARY KEY (id);


--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);


--
-- Name: operations operations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operations
    ADD CONSTRAINT operations_pkey PRIMARY KEY (name, version);


--
-- Name: owners owners_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.owners
    ADD CONSTRAINT owners_pkey PRIMARY KEY (name, owner);


--
-- Name: packages packages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.packages
    ADD CONSTRAINT packages_pkey PRIMARY KEY (ecosystem, name, version);


--
-- Name: publishes publishes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.publishes
    ADD CONSTRAINT publishes_pkey PRIMARY KEY (id);


--
-- Name: builds_workflow; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX builds_workflow ON public.builds USING btree (workflow_id, created_at);


--
-- Name: jobs_build; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_build ON public.jobs USING btree (build_id, state);


--
-- Name: jobs_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_state ON public.jobs USING btree (state, seq);


--
-- Name: packages_cid; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX packages_cid ON public.packages USING btree (cid);


--
-- Name: publishes_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX publishes_state ON public.publishes USING btree (state, seq);


--
-- Name: publishes_version; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX publishes_version ON public.publishes USING btree (version_id, state);


--
-- Name: jobs jobs_build_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_build_id_fkey FOREIGN KEY (build_id) REFERENCES public.builds(id);


--
-- PostgreSQL database dump complete
--


