//! The REAPI engine as dtld-reapi sees it: one gRPC channel (plain or TLS, with the user's extra
//! headers on every call) and the handful of calls a DTLTO link needs, each retried with backoff
//! when the error is transient.
//!
//! Retried: UNAVAILABLE (engine restarting, connection refused or dropped), DEADLINE_EXCEEDED,
//! RESOURCE_EXHAUSTED, ABORTED, and UNKNOWN (what a broken HTTP/2 connection surfaces as). Every
//! other status is the engine's answer and is reported. Every blob read back is checked against
//! its digest, so a bad engine cannot hand the linker a corrupt object.

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use bazel_remote_apis::google::bytestream::{byte_stream_client::ByteStreamClient, ReadRequest, WriteRequest};
use bazel_remote_apis::google::longrunning::operation;
use prost::Message;
use re::action_cache_client::ActionCacheClient;
use re::capabilities_client::CapabilitiesClient;
use re::content_addressable_storage_client::ContentAddressableStorageClient;
use re::execution_client::ExecutionClient;
use tonic::metadata::{Ascii, MetadataKey, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Code, Request, Status};

use crate::action::{digest, Source};

/// How to reach the engine.
#[derive(Debug, Clone)]
pub struct Options {
    /// `grpc://host:port` or `grpcs://host:port`.
    pub endpoint: String,
    pub instance: String,
    /// Extra request headers (`authorization`, `x-buildbuddy-api-key`, ...).
    pub headers: Vec<(String, String)>,
    /// PEM files: a CA to trust (besides the system's), a client certificate and its key.
    pub ca: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// Retries of a transient error before giving up.
    pub retries: u32,
    /// Deadline of every call except Execute.
    pub rpc_timeout: Duration,
}

/// Counters the summary line reports.
#[derive(Default, Debug)]
pub struct Counters {
    pub retried: AtomicU64,
    pub uploaded_bytes: AtomicU64,
    pub uploaded_blobs: AtomicU64,
    pub downloaded_bytes: AtomicU64,
}

/// Adds the user's headers to every request.
#[derive(Clone)]
pub struct Headers(Arc<Vec<(MetadataKey<Ascii>, MetadataValue<Ascii>)>>);

impl tonic::service::Interceptor for Headers {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        for (k, v) in self.0.iter() {
            req.metadata_mut().insert(k.clone(), v.clone());
        }
        Ok(req)
    }
}

type Svc = InterceptedService<Channel, Headers>;

/// What the engine supports, from GetCapabilities.
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// The largest total size of one BatchUpdateBlobs / BatchReadBlobs request.
    pub max_batch: usize,
}

#[derive(Clone)]
pub struct Client {
    instance: String,
    retries: u32,
    rpc_timeout: Duration,
    caps: CapabilitiesClient<Svc>,
    cas: ContentAddressableStorageClient<Svc>,
    ac: ActionCacheClient<Svc>,
    exec: ExecutionClient<Svc>,
    bytestream: ByteStreamClient<Svc>,
    pub counters: Arc<Counters>,
}

/// gRPC's own default limit on a message, which also bounds a batch when the engine gives none.
const DEFAULT_BATCH: usize = 4 * 1024 * 1024;
/// Room left in a batch for the request's framing (digests, field tags).
const BATCH_MARGIN: usize = 64 * 1024;
/// ByteStream chunk size.
const CHUNK: usize = 1024 * 1024;
/// Digests per FindMissingBlobs request.
const FIND_BATCH: usize = 4096;

/// Whether a call that failed with `s` may succeed if tried again.
pub fn transient(s: &Status) -> bool {
    matches!(s.code(), Code::Unavailable | Code::DeadlineExceeded | Code::ResourceExhausted | Code::Aborted | Code::Unknown)
}

/// Parses `name=value` (also `name: value`) into a header; names are lower-cased as HTTP/2 needs.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    let (k, v) = text.split_once('=').or_else(|| text.split_once(':')).ok_or_else(|| format!("header '{text}' is not NAME=VALUE"))?;
    let k = k.trim().to_ascii_lowercase();
    if k.is_empty() {
        return Err(format!("header '{text}' has an empty name"));
    }
    Ok((k, v.trim_start().to_string()))
}

/// `grpc://h:p` → (`http://h:p`, false); `grpcs://h:p` → (`https://h:p`, true).
pub fn parse_endpoint(e: &str) -> Result<(String, bool), String> {
    let (rest, tls) = if let Some(r) = e.strip_prefix("grpc://") {
        (r, false)
    } else if let Some(r) = e.strip_prefix("grpcs://") {
        (r, true)
    } else if let Some(r) = e.strip_prefix("http://") {
        (r, false)
    } else if let Some(r) = e.strip_prefix("https://") {
        (r, true)
    } else {
        return Err(format!("endpoint '{e}' must start with grpc:// or grpcs://"));
    };
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.contains('/') {
        return Err(format!("endpoint '{e}' must be grpc://HOST:PORT or grpcs://HOST:PORT"));
    }
    Ok((format!("{}://{rest}", if tls { "https" } else { "http" }), tls))
}

fn read_pem(what: &str, p: &PathBuf) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("cannot read the {what} '{}': {e}", p.display()))
}

fn backoff(attempt: u32) -> Duration {
    // 100 ms, 200 ms, 400 ms, ... capped at 5 s, with up to 25% jitter so that parallel jobs
    // retrying the same outage do not return in lockstep.
    let base = Duration::from_millis(100) * 2u32.saturating_pow(attempt.saturating_sub(1)).min(50);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    base + base / 4 * (nanos % 1000) / 1000
}

/// A unique name for a ByteStream upload (`uploads/{uuid}/...`); not part of any Action.
fn upload_id(d: &re::Digest) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let h = digest(format!("{} {} {} {}", std::process::id(), now.as_nanos(), d.hash, d.size_bytes).as_bytes()).hash;
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

impl Client {
    /// Sets up the channel; nothing is sent until the first call.
    pub fn new(o: &Options) -> Result<Client, String> {
        let (uri, tls) = parse_endpoint(&o.endpoint)?;
        let mut ep = Endpoint::from_shared(uri.clone())
            .map_err(|e| format!("endpoint '{}': {e}", o.endpoint))?
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .keep_alive_while_idle(true);
        if !tls && (o.ca.is_some() || o.cert.is_some() || o.key.is_some()) {
            return Err(format!("--tls-ca/--tls-cert/--tls-key need a grpcs:// endpoint, not '{}'", o.endpoint));
        }
        if o.cert.is_some() != o.key.is_some() {
            return Err("--tls-cert and --tls-key go together".into());
        }
        if tls {
            let mut cfg = ClientTlsConfig::new().with_native_roots();
            if let Some(ca) = &o.ca {
                cfg = cfg.ca_certificate(Certificate::from_pem(read_pem("CA certificate", ca)?));
            }
            if let (Some(c), Some(k)) = (&o.cert, &o.key) {
                cfg = cfg.identity(Identity::from_pem(read_pem("client certificate", c)?, read_pem("client key", k)?));
            }
            ep = ep.tls_config(cfg).map_err(|e| format!("TLS setup for '{}': {e}", o.endpoint))?;
        }
        let mut headers = Vec::new();
        for (k, v) in &o.headers {
            let key = MetadataKey::from_bytes(k.as_bytes()).map_err(|_| format!("header name '{k}' is not valid"))?;
            let value = MetadataValue::try_from(v.as_str()).map_err(|_| format!("header '{k}' has a value that is not printable ASCII"))?;
            headers.push((key, value));
        }
        let channel = ep.connect_lazy();
        let h = Headers(Arc::new(headers));
        let limit = 64 * 1024 * 1024;
        Ok(Client {
            instance: o.instance.clone(),
            retries: o.retries,
            rpc_timeout: o.rpc_timeout,
            caps: CapabilitiesClient::with_interceptor(channel.clone(), h.clone()).max_decoding_message_size(limit),
            cas: ContentAddressableStorageClient::with_interceptor(channel.clone(), h.clone()).max_decoding_message_size(limit),
            ac: ActionCacheClient::with_interceptor(channel.clone(), h.clone()).max_decoding_message_size(limit),
            exec: ExecutionClient::with_interceptor(channel.clone(), h.clone()).max_decoding_message_size(limit),
            bytestream: ByteStreamClient::with_interceptor(channel, h).max_decoding_message_size(limit),
            counters: Arc::new(Counters::default()),
        })
    }

    /// Runs `call` until it succeeds, fails for good, or the retries are used up.
    async fn retry<T, F, Fut>(&self, mut call: F) -> Result<T, Status>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        let mut attempt = 0;
        loop {
            match call().await {
                Ok(v) => return Ok(v),
                Err(s) if transient(&s) && attempt < self.retries => {
                    attempt += 1;
                    self.counters.retried.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(backoff(attempt)).await;
                }
                Err(s) => return Err(s),
            }
        }
    }

    fn request<T>(&self, msg: T) -> Request<T> {
        let mut r = Request::new(msg);
        r.set_timeout(self.rpc_timeout);
        r
    }

    /// GetCapabilities: checks that the engine executes actions and speaks SHA-256.
    pub async fn capabilities(&self) -> Result<Capabilities, String> {
        let req = re::GetCapabilitiesRequest { instance_name: self.instance.clone() };
        let caps = self
            .retry(|| {
                let mut c = self.caps.clone();
                let r = self.request(req.clone());
                async move { c.get_capabilities(r).await.map(|r| r.into_inner()) }
            })
            .await
            .map_err(|s| status_text(&s))?;
        let sha256 = re::digest_function::Value::Sha256 as i32;
        if let Some(cache) = &caps.cache_capabilities {
            if !cache.digest_functions.is_empty() && !cache.digest_functions.contains(&sha256) {
                return Err("the engine's CAS does not support SHA-256 digests".into());
            }
        }
        match &caps.execution_capabilities {
            Some(e) if e.exec_enabled => {}
            _ => return Err("the engine does not execute actions (is this a cache-only endpoint?)".into()),
        }
        let max = caps.cache_capabilities.as_ref().map(|c| c.max_batch_total_size_bytes).unwrap_or(0);
        let max_batch = if max <= 0 { DEFAULT_BATCH } else { (max as usize).min(DEFAULT_BATCH) };
        Ok(Capabilities { max_batch: max_batch.saturating_sub(BATCH_MARGIN).max(1024) })
    }

    /// FindMissingBlobs over `digests` (in batches).
    pub async fn find_missing(&self, digests: &[re::Digest]) -> Result<Vec<re::Digest>, Status> {
        let mut missing = Vec::new();
        for chunk in digests.chunks(FIND_BATCH) {
            let req = re::FindMissingBlobsRequest { instance_name: self.instance.clone(), blob_digests: chunk.to_vec(), digest_function: 0 };
            let r = self
                .retry(|| {
                    let mut c = self.cas.clone();
                    let r = self.request(req.clone());
                    async move { c.find_missing_blobs(r).await.map(|r| r.into_inner()) }
                })
                .await?;
            missing.extend(r.missing_blob_digests);
        }
        Ok(missing)
    }

    /// Uploads `blobs`: small ones together in BatchUpdateBlobs requests of at most
    /// `caps.max_batch` bytes, large ones through ByteStream.
    pub async fn upload(&self, blobs: Vec<(re::Digest, Source)>, caps: &Capabilities) -> Result<(), String> {
        let mut batch: Vec<re::batch_update_blobs_request::Request> = Vec::new();
        let mut batch_size = 0;
        for (d, src) in blobs {
            let data = load(&d, &src)?;
            if data.len() > caps.max_batch {
                self.write_stream(&d, data).await?;
                continue;
            }
            if batch_size + data.len() > caps.max_batch {
                self.batch_update(std::mem::take(&mut batch)).await?;
                batch_size = 0;
            }
            batch_size += data.len();
            batch.push(re::batch_update_blobs_request::Request { digest: Some(d), data, compressor: 0 });
        }
        if !batch.is_empty() {
            self.batch_update(batch).await?;
        }
        Ok(())
    }

    async fn batch_update(&self, requests: Vec<re::batch_update_blobs_request::Request>) -> Result<(), String> {
        let bytes: u64 = requests.iter().map(|r| r.data.len() as u64).sum();
        let count = requests.len() as u64;
        let req = re::BatchUpdateBlobsRequest { instance_name: self.instance.clone(), requests, digest_function: 0 };
        let r = self
            .retry(|| {
                let mut c = self.cas.clone();
                let r = self.request(req.clone());
                async move { c.batch_update_blobs(r).await.map(|r| r.into_inner()) }
            })
            .await
            .map_err(|s| format!("uploading {count} blobs: {}", status_text(&s)))?;
        for resp in r.responses {
            if let Some(st) = resp.status.filter(|s| s.code != 0) {
                let d = resp.digest.unwrap_or_default();
                return Err(format!("uploading blob {}/{}: {}", d.hash, d.size_bytes, rpc_status_text(&st)));
            }
        }
        self.counters.uploaded_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.counters.uploaded_blobs.fetch_add(count, Ordering::Relaxed);
        Ok(())
    }

    fn resource(&self, tail: &str) -> String {
        if self.instance.is_empty() {
            tail.to_string()
        } else {
            format!("{}/{tail}", self.instance)
        }
    }

    async fn write_stream(&self, d: &re::Digest, data: Vec<u8>) -> Result<(), String> {
        let data = Arc::new(data);
        let r = self
            .retry(|| {
                let name = self.resource(&format!("uploads/{}/blobs/{}/{}", upload_id(d), d.hash, d.size_bytes));
                let data = data.clone();
                let total = data.len();
                let mut reqs = Vec::new();
                let mut off = 0;
                loop {
                    let end = (off + CHUNK).min(total);
                    reqs.push(WriteRequest {
                        resource_name: if off == 0 { name.clone() } else { String::new() },
                        write_offset: off as i64,
                        finish_write: end == total,
                        data: data[off..end].to_vec(),
                    });
                    off = end;
                    if off >= total {
                        break;
                    }
                }
                let mut c = self.bytestream.clone();
                async move { c.write(tokio_stream::iter(reqs)).await.map(|r| r.into_inner()) }
            })
            .await
            .map_err(|s| format!("uploading blob {}/{}: {}", d.hash, d.size_bytes, status_text(&s)))?;
        // A server that already has the blob may end the write early and report its full size.
        if r.committed_size != d.size_bytes && r.committed_size != -1 {
            return Err(format!("uploading blob {}/{}: the engine committed {} bytes", d.hash, d.size_bytes, r.committed_size));
        }
        self.counters.uploaded_bytes.fetch_add(d.size_bytes as u64, Ordering::Relaxed);
        self.counters.uploaded_blobs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Reads a blob and checks it against its digest. NOT_FOUND stays a `Status` so the caller
    /// can tell an evicted blob from other failures.
    pub async fn read(&self, d: &re::Digest, caps: &Capabilities) -> Result<Vec<u8>, Status> {
        if d.size_bytes == 0 {
            return Ok(Vec::new());
        }
        let data = if (d.size_bytes as usize) <= caps.max_batch {
            let req = re::BatchReadBlobsRequest {
                instance_name: self.instance.clone(),
                digests: vec![d.clone()],
                acceptable_compressors: Vec::new(),
                digest_function: 0,
            };
            let r = self
                .retry(|| {
                    let mut c = self.cas.clone();
                    let r = self.request(req.clone());
                    async move { c.batch_read_blobs(r).await.map(|r| r.into_inner()) }
                })
                .await?;
            let resp = r.responses.into_iter().next().ok_or_else(|| Status::internal("BatchReadBlobs returned no response"))?;
            if let Some(st) = resp.status.filter(|s| s.code != 0) {
                return Err(Status::new(Code::from_i32(st.code), st.message));
            }
            resp.data
        } else {
            let name = self.resource(&format!("blobs/{}/{}", d.hash, d.size_bytes));
            self.retry(|| {
                let mut c = self.bytestream.clone();
                let r = self.request(ReadRequest { resource_name: name.clone(), read_offset: 0, read_limit: 0 });
                async move {
                    let mut stream = c.read(r).await?.into_inner();
                    let mut data = Vec::new();
                    while let Some(chunk) = stream.message().await? {
                        data.extend_from_slice(&chunk.data);
                    }
                    Ok(data)
                }
            })
            .await?
        };
        let got = digest(&data);
        if got != *d {
            return Err(Status::data_loss(format!("blob {}/{} read back as {}/{}", d.hash, d.size_bytes, got.hash, got.size_bytes)));
        }
        self.counters.downloaded_bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(data)
    }

    /// GetActionResult: `None` on a miss.
    pub async fn cached_result(&self, action: &re::Digest) -> Result<Option<re::ActionResult>, Status> {
        let req = re::GetActionResultRequest {
            instance_name: self.instance.clone(),
            action_digest: Some(action.clone()),
            inline_stdout: true,
            inline_stderr: true,
            inline_output_files: Vec::new(),
            digest_function: 0,
        };
        let r = self
            .retry(|| {
                let mut c = self.ac.clone();
                let r = self.request(req.clone());
                async move { c.get_action_result(r).await.map(|r| r.into_inner()) }
            })
            .await;
        match r {
            Ok(res) => Ok(Some(res)),
            Err(s) if s.code() == Code::NotFound => Ok(None),
            Err(s) => Err(s),
        }
    }

    /// Execute, following the operation stream to its end. `timeout` bounds the whole wait.
    pub async fn execute(&self, action: &re::Digest, skip_cache_lookup: bool, timeout: Duration) -> Result<re::ExecuteResponse, Status> {
        let req = re::ExecuteRequest {
            instance_name: self.instance.clone(),
            skip_cache_lookup,
            action_digest: Some(action.clone()),
            execution_policy: None,
            results_cache_policy: None,
            digest_function: 0,
            inline_stdout: true,
            inline_stderr: true,
            inline_output_files: Vec::new(),
        };
        self.retry(|| {
            let mut c = self.exec.clone();
            let mut r = Request::new(req.clone());
            r.set_timeout(timeout);
            async move {
                let mut stream = c.execute(r).await?.into_inner();
                while let Some(op) = stream.message().await? {
                    if !op.done {
                        continue;
                    }
                    return match op.result {
                        Some(operation::Result::Response(any)) => {
                            let resp =
                                re::ExecuteResponse::decode(any.value.as_slice()).map_err(|e| Status::internal(format!("undecodable ExecuteResponse: {e}")))?;
                            match &resp.status {
                                Some(st) if st.code != 0 && resp.result.is_none() => Err(Status::new(Code::from_i32(st.code), st.message.clone())),
                                _ => Ok(resp),
                            }
                        }
                        Some(operation::Result::Error(st)) => Err(Status::new(Code::from_i32(st.code), st.message)),
                        None => Err(Status::internal("the operation finished without a result")),
                    };
                }
                Err(Status::unavailable("the execution stream ended before the action finished"))
            }
        })
        .await
    }
}

/// The bytes of a blob to upload, checked against its digest (a file may have changed since it
/// was hashed).
fn load(d: &re::Digest, src: &Source) -> Result<Vec<u8>, String> {
    let (data, p) = match src {
        Source::Bytes(b) => return Ok(b.clone()),
        Source::File(p) => (std::fs::read(p).map_err(|e| format!("cannot read '{p}': {e}"))?, p),
        Source::Shard { path, names, module } => {
            let shard = std::fs::read(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
            (crate::action::rename_shard(&shard, names, module).map_err(|e| format!("'{path}': {e}"))?, path)
        }
    };
    if digest(&data) != *d {
        return Err(format!("'{p}' changed during the link"));
    }
    Ok(data)
}

/// A gRPC status for messages: `UNAVAILABLE: connection refused`.
pub fn status_text(s: &Status) -> String {
    let code = format!("{:?}", s.code());
    let mut name = String::new();
    for (i, ch) in code.chars().enumerate() {
        if ch.is_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(ch.to_ascii_uppercase());
    }
    let mut msg = s.message().to_string();
    // tonic puts the cause (connection refused, ...) in the source chain, not the message.
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(s);
    while let Some(e) = src {
        let t = e.to_string();
        if !msg.contains(&t) {
            msg.push_str(": ");
            msg.push_str(&t);
        }
        src = e.source();
    }
    if msg.is_empty() {
        name
    } else {
        format!("{name}: {msg}")
    }
}

fn rpc_status_text(s: &bazel_remote_apis::google::rpc::Status) -> String {
    status_text(&Status::new(Code::from_i32(s.code), s.message.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(parse_endpoint("grpc://127.0.0.1:8980").unwrap(), ("http://127.0.0.1:8980".into(), false));
        assert_eq!(parse_endpoint("grpcs://remote.buildbuddy.io").unwrap(), ("https://remote.buildbuddy.io".into(), true));
        assert!(parse_endpoint("127.0.0.1:1").unwrap_err().contains("grpc://"));
        assert!(parse_endpoint("grpc://h:1/x").is_err());
    }

    #[test]
    fn headers() {
        assert_eq!(parse_header("authorization=Bearer x=y").unwrap(), ("authorization".into(), "Bearer x=y".into()));
        assert_eq!(parse_header("X-BuildBuddy-API-Key: k").unwrap(), ("x-buildbuddy-api-key".into(), "k".into()));
        assert!(parse_header("novalue").is_err());
    }

    #[test]
    fn statuses() {
        assert!(transient(&Status::unavailable("x")));
        assert!(!transient(&Status::invalid_argument("x")));
        assert_eq!(status_text(&Status::failed_precondition("missing")), "FAILED_PRECONDITION: missing");
    }

    #[test]
    fn backoff_grows() {
        assert!(backoff(1) >= Duration::from_millis(100) && backoff(1) < Duration::from_millis(130));
        assert!(backoff(3) >= Duration::from_millis(400));
        assert!(backoff(30) <= Duration::from_millis(6300));
    }
}
