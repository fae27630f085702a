/**
 * Every error the service answers with, in one place. Each code is stable: clients
 * may branch on it. `docs/errors.md` lists every code and a test keeps the two in step
 * (the fastify habit: a code that is not documented fails the build).
 *
 * `message` is a template: each `%s` is replaced, in order, by an argument given
 * where the error is raised.
 */
export interface CatalogEntry {
  readonly status: number;
  /** OpenAI's error `type`, what OpenAI SDKs branch on. */
  readonly type: ErrorType;
  readonly message: string;
}

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'server_error'
  | 'service_unavailable_error';

const entry = (status: number, type: ErrorType, message: string): CatalogEntry => ({ status, type, message });

export const catalog = {
  // Request shape
  invalid_json: entry(400, 'invalid_request_error', 'Malformed JSON in request body: %s'),
  invalid_field: entry(400, 'invalid_request_error', '%s'),
  unsupported_media_type: entry(415, 'invalid_request_error', 'Unsupported content type: %s'),
  unsupported_content_encoding: entry(415, 'invalid_request_error', 'Unsupported Content-Encoding: %s; send the body as it is, or compressed with gzip, deflate or br'),
  invalid_body_encoding: entry(400, 'invalid_request_error', 'The body does not decompress as its Content-Encoding %s says: %s'),
  compressed_form: entry(415, 'invalid_request_error', 'A multipart form is read as it is sent: send it without Content-Encoding (it said %s)'),
  payload_too_large: entry(413, 'invalid_request_error', 'Request body is too large: %s'),
  request_timeout: entry(408, 'invalid_request_error', 'The request did not arrive within %s s (HANGAR_REQUEST_BODY_TIMEOUT_MS); the connection is closed'),
  bad_http_request: entry(400, 'invalid_request_error', 'The request could not be read as HTTP: %s'),
  route_not_found: entry(404, 'not_found_error', 'Route %s %s not found'),
  method_not_allowed: entry(405, 'invalid_request_error', 'Method Not Allowed: %s %s; this path takes %s'),
  bad_url: entry(400, 'invalid_request_error', 'The path %s holds a percent-escape that is not UTF-8 text'),
  path_segment_too_long: entry(414, 'invalid_request_error', 'A part of the path %s is over %s characters; no uid or name is that long'),

  // Authentication (contract §6); the messages are Xinference's, clients match on them.
  not_authenticated: entry(401, 'authentication_error', 'Not authenticated'),
  invalid_credentials: entry(401, 'authentication_error', 'Could not validate credentials'),
  incorrect_login: entry(401, 'authentication_error', 'Incorrect username or password'),
  permission_denied: entry(403, 'permission_error', 'Not enough permissions'),
  code_power_required: entry(403, 'permission_error', 'Not enough permissions: this runs code of your choosing on the server, which needs `models:code`: %s'),
  auth_disabled: entry(400, 'invalid_request_error', 'Authentication is not enabled on this server; no token is needed'),

  // Database users, API keys and their limits (docs/auth.md)
  key_model_denied: entry(403, 'permission_error', 'This API key may not use model %s'),
  key_rate_limited: entry(429, 'rate_limit_error', 'Rate limit reached for %s of this API key: %s'),
  login_throttled: entry(429, 'rate_limit_error', 'Too many failed logins for this user or address; try again in %s s'),
  login_locked: entry(429, 'rate_limit_error', 'Logins for this user or address are locked after repeated failures; try again in %s s'),
  key_not_found: entry(404, 'not_found_error', 'API key %s not found'),
  user_not_found: entry(404, 'not_found_error', 'User %s not found'),
  user_exists: entry(409, 'conflict_error', 'User %s already exists'),
  user_disabled: entry(409, 'conflict_error', 'User %s is disabled: enable the account (PUT /v1/admin/users/{id} with enabled true) before it can own a key'),
  user_read_only: entry(400, 'invalid_request_error', 'User %s comes from the auth config file; change it there'),
  key_scope_not_held: entry(400, 'invalid_request_error', "A key's scopes must be a subset of its owner's: %s does not hold %s"),
  key_restricted: entry(403, 'permission_error', 'This API key has restrictions of its own (%s), so it cannot create or change keys or users: a key it made or changed, or an account whose password it set, could hold more than it does. Log in, or use a key without restrictions'),
  user_holds_more: entry(403, 'permission_error', 'Not enough permissions to %s user %s: they hold %s, which you do not; only an admin, or a caller who holds as much, may'),
  permission_not_grantable: entry(403, 'permission_error', 'Cannot grant permissions you do not hold: %s'),
  first_user_not_admin: entry(400, 'invalid_request_error', 'The first database user turns authentication on and must hold admin, or nobody could manage the service'),

  // Registrations
  unsupported_model_type: entry(400, 'invalid_request_error', 'Unsupported model type: %s'),
  invalid_model_name: entry(400, 'invalid_request_error', 'Invalid model name %s.'),
  model_dir_refused: entry(400, 'invalid_request_error', 'The model path %s is outside the folders models may come from on this server (--model-dirs: %s)'),
  invalid_model_uri: entry(400, 'invalid_request_error', 'Invalid model URI %s: %s'),
  invalid_registration: entry(400, 'invalid_request_error', 'Invalid model definition: %s'),
  registration_not_found: entry(404, 'not_found_error', 'Model %s not found'),
  registration_conflict: entry(409, 'conflict_error', 'Model name conflicts with existing model %s'),
  builtin_unregister: entry(400, 'invalid_request_error', 'Built-in model %s cannot be unregistered'),
  registration_in_use: entry(409, 'conflict_error', 'Model %s cannot be unregistered: it is used by %s; terminate them (or remove them from autostart) first'),
  registration_not_owner: entry(403, 'permission_error', 'Model %s was registered by another user; only its owner or an admin may replace or unregister it'),
  registration_persist_failed: entry(500, 'server_error', 'Could not save the registration of model %s: %s'),
  // Models on the hub (docs/registry.md, "Launch by hub id", "Hub search")
  hub_unreachable: entry(503, 'service_unavailable_error', 'The model hub %s could not be reached: %s'),
  hub_offline: entry(503, 'service_unavailable_error', 'The model hub %s is not asked for %s: offline mode is on (HF_HUB_OFFLINE)'),
  hub_model_not_found: entry(404, 'not_found_error', 'Model %s was not found on the hub %s%s'),
  hub_access_denied: entry(403, 'permission_error', 'The hub %s refused access to %s (a gated or private repo): %s'),
  hub_error: entry(502, 'server_error', 'The hub %s answered %s for %s'),
  hub_quantization_not_found: entry(404, 'not_found_error', 'Model %s has no GGUF file for %s; it offers %s'),
  hub_model_unusable: entry(400, 'invalid_request_error', 'Model %s cannot be launched from the hub: %s'),
  model_type_mismatch: entry(400, 'invalid_request_error', 'Model %s is registered as type %s, not %s; launch it with model_type %s'),

  // Launch
  missing_model_name: entry(400, 'invalid_request_error', 'Invalid input. Please specify the `model_name` field.'),
  missing_model_engine: entry(400, 'invalid_request_error', 'Invalid input. Please specify the `model_engine` field.'),
  invalid_model_uid: entry(400, 'invalid_request_error', 'The model UID is invalid: %s'),
  model_spec_not_found: entry(400, 'invalid_request_error', 'Model not found, name: %s, format: %s, size: %s, quantization: %s'),
  engine_unavailable: entry(400, 'invalid_request_error', 'Model %s cannot be run on engine %s. %s'),
  invalid_gpu_request: entry(400, 'invalid_request_error', '%s'),
  model_path_not_found: entry(400, 'invalid_request_error', 'Invalid input. `model_path`: %s File or directory does not exist.'),
  model_uid_conflict: entry(409, 'conflict_error', 'Model is already in the model list, uid: %s'),
  model_load_invalid: entry(400, 'invalid_request_error', 'Model %s could not be loaded: %s'),
  model_load_failed: entry(500, 'server_error', 'Model %s failed to load: %s'),
  model_source_unreachable: entry(503, 'service_unavailable_error', 'Model %s could not be loaded now: %s'),
  launch_cancelled: entry(499, 'invalid_request_error', 'Launch of model %s was cancelled'),
  no_gpu_slot: entry(503, 'service_unavailable_error', 'No available slot found for the model: %s'),
  insufficient_memory: entry(400, 'invalid_request_error', 'Model %s requires more memory than is available: %s'),

  // Running models and inference
  model_not_found: entry(404, 'not_found_error', 'Model not found in the model list, uid: %s'),
  model_loading: entry(503, 'service_unavailable_error', 'Model is loading, please retry later: %s'),
  ability_missing: entry(400, 'invalid_request_error', 'Model %s does not support %s (its abilities: %s)'),
  wrong_model_type: entry(400, 'invalid_request_error', 'Model %s is of type %s; %s needs a model of type %s'),
  request_limit_reached: entry(429, 'rate_limit_error', 'Rate limit reached for the model. Request limit %s for the model: %s'),
  parameter_unsupported: entry(400, 'invalid_request_error', 'The `%s` parameter is not supported by the %s engine of model %s%s'),
  image_fetch_failed: entry(400, 'invalid_request_error', 'Could not fetch the image of %s: %s'),
  image_url_refused: entry(400, 'invalid_request_error', 'The image of %s was not fetched: %s'),
  image_too_large: entry(400, 'invalid_request_error', 'The image of %s is too large: %s'),
  field_unsupported: entry(400, 'invalid_request_error', 'The `%s` field is not supported here: %s'),
  response_not_found: entry(404, 'not_found_error', "Response with id '%s' not found."),
  response_item_not_found: entry(404, 'not_found_error', "Item with id '%s' not found."),
  response_not_cancellable: entry(400, 'invalid_request_error', 'Only responses created with background: true can be cancelled, and this service runs none in the background; %s is complete'),
  inference_invalid_input: entry(400, 'invalid_request_error', '%s'),
  inference_failed: entry(500, 'server_error', '%s'),
  autostart_not_found: entry(404, 'not_found_error', 'Model %s is not in the autostart list'),
  on_demand_not_found: entry(404, 'not_found_error', 'Model %s is not in the on-demand list'),
  replica_not_found: entry(404, 'not_found_error', 'Replica %s of model %s not found'),
  last_replica: entry(400, 'invalid_request_error', 'Model %s has one replica left; terminate the model to stop it'),
  replica_limit: entry(400, 'invalid_request_error', 'Model %s already has %s replicas, the most one model may have'),
  request_aborted: entry(499, 'invalid_request_error', 'Request %s was aborted (POST /v1/models/{model_uid}/requests/{request_id}/abort)'),
  request_blocked: entry(409, 'invalid_request_error', 'The request has been aborted: %s (its id is blocked for %s s more by the abort\'s block_duration); send it with another request_id'),
  client_closed: entry(499, 'invalid_request_error', 'The client closed the connection before the answer to request %s; its call was stopped'),
  request_not_found: entry(400, 'invalid_request_error', 'No request %s is in flight or finished recently'),
  runtime_unavailable: entry(503, 'service_unavailable_error', 'The runtime of model %s is not available: %s'),
  cluster_unavailable: entry(503, 'service_unavailable_error', 'The cluster is not available: %s'),
  invalid_worker_ip: entry(400, 'invalid_request_error', 'Worker ip address %s is not in the cluster; its nodes: %s'),

  catalog_update_unavailable: entry(503, 'service_unavailable_error', 'The %s catalog cannot be updated: %s'),

  // The weights cache (docs/registry.md, "Cache")
  cache_entry_not_found: entry(404, 'not_found_error', 'No cached model %s; `GET /v1/cache/models` lists what is on disk'),
  cache_in_use: entry(409, 'conflict_error', 'Cached model %s is in use by running model(s) %s; terminate them first'),

  // Audio, image and video routes
  unsupported_upload_format: entry(400, 'invalid_request_error', 'The file in field %s is not %s in a format this route reads; expected one of: %s'),
  route_engine_missing: entry(400, 'invalid_request_error', '%s needs the %s engine, which is not installed on this server (%s)'),
  media_not_found: entry(404, 'not_found_error', 'Generated file %s not found; links to generated files expire'),

  server_draining: entry(503, 'service_unavailable_error', 'The server is shutting down and takes no new requests'),
  server_busy: entry(503, 'service_unavailable_error', 'The server holds %s of request bodies in flight, and this body\'s next bytes would take them past the budget of %s (HANGAR_MAX_INFLIGHT_BODY_BYTES); retry shortly'),

  // Web UI
  web_ui_not_built: entry(503, 'service_unavailable_error', 'The web UI is not built (%s is missing); run `npm run setup`'),

  // Anything unexpected; the message never carries internals.
  internal_error: entry(500, 'server_error', 'Internal server error (request id %s)'),
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof catalog;
