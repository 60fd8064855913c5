#include "service/front.hpp"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <stdexcept>

namespace kernelrl::service {

namespace {

using clock_type = std::chrono::steady_clock;

// Bytes that are not UTF-8 (a message quoting a request's bad string) are written as U+FFFD: an
// answer is never an exception.
void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

// How deep a request body may nest: a job is 4 levels ({"jobs": [{"options": {...}}]}). A parser
// callback refuses deeper bodies as they are read, before they are built: 300,000 nested '[' once
// crashed the server (the recursion of what then reads the value).
constexpr int kMaxBodyDepth = 32;

// A body the parser reads but the service does not take: nested too deep, or a number past what a
// double holds (1e400). A 400 in guarded(), as a parse error is.
struct BadBody : std::runtime_error {
  using std::runtime_error::runtime_error;
};

nlohmann::json parse_body(const std::string& text) {
  try {
    return nlohmann::json::parse(text, [](int depth, nlohmann::json::parse_event_t, const nlohmann::json&) {
      if (depth > kMaxBodyDepth) {
        throw BadBody("the request body nests deeper than " + std::to_string(kMaxBodyDepth) +
                      " levels; a job is an object of strings, numbers and one level of options");
      }
      return true;
    });
  } catch (const nlohmann::json::out_of_range& e) {
    throw BadBody(std::string("the request body holds a number out of range: ") + e.what());
  }
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, {{"error", {{"status", status}, {"message", message}}}});
}

void send_redis_down(httplib::Response& res, const std::string& message) {
  res.set_header("Retry-After", "1");
  send_error(res, 503, "the queue (Redis) cannot be reached: " + message);
}

nlohmann::json view_json(const JobView& v) {
  nlohmann::json j = {{"id", v.id}, {"state", v.state}, {"attempts", v.attempts}};
  if (!v.result.is_null()) j["result"] = v.result;
  if (!v.worker.empty()) j["worker"] = v.worker;
  if (!v.finished_by.empty()) j["finished_by"] = v.finished_by;
  if (v.finished_ms > 0 && v.submitted_ms > 0) j["latency_s"] = (v.finished_ms - v.submitted_ms) / 1000;
  return j;
}

bool valid_id(const std::string& id) {
  if (id.size() < 3 || id.size() > 64) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  }
  return true;
}

}  // namespace

Front::Front(ServeConfig config, RedisUrl url)
    : config_(std::move(config)), url_(std::move(url)), queue_(config_.prefix), pool_(url_) {}

Front::~Front() { stop(); }

common::Expected<std::unique_ptr<Front>> Front::create(ServeConfig config) {
  auto url = resolve_redis(config.redis);
  if (!url) return url.error();
  std::unique_ptr<Front> f(new Front(std::move(config), *url));
  if (!f->config_.token_file.empty()) {
    auto auth = TokenAuth::from_file(f->config_.token_file);
    if (!auth) return auth.error();
    f->auth_ = std::move(*auth);
  }
  for (const auto& arg : f->config_.task_sets) {
    if (auto s = f->task_sets_.add(arg); !s) return s.error();
  }
  auto c = f->pool_.lease();
  if (!c) return c.error();
  if (auto s = f->queue_.ensure_group(**c); !s) return s.error();
  return f;
}

Front::Handler Front::guarded(bool needs_token, Handler handler) {
  return [this, needs_token, handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    if (needs_token && !auth_.allows(req.get_header_value("Authorization"))) {
      res.set_header("WWW-Authenticate", "Bearer");
      send_error(res, 401,
                 "missing or wrong bearer token (send Authorization: Bearer TOKEN, a token of the service's --token-file)");
      return;
    }
    try {
      handler(req, res);
    } catch (const nlohmann::json::parse_error& e) {
      send_error(res, 400, std::string("the request body is not JSON: ") + e.what());
    } catch (const BadBody& e) {
      send_error(res, 400, e.what());
    } catch (const std::exception& e) {
      send_error(res, 500, std::string("internal error: ") + e.what());
    }
  };
}

void Front::install_routes() {
  auto& s = *server_;
  s.Post("/v1/evaluations", guarded(true, [this](const auto& req, auto& res) { post_evaluations(req, res); }));
  s.Get(R"(/v1/evaluations/([^/]+))", guarded(true, [this](const auto& req, auto& res) { get_evaluation(req, res); }));
  s.Get(R"(/v1/batches/([^/]+))", guarded(true, [this](const auto& req, auto& res) { get_batch(req, res); }));
  s.Get("/v1/tasks", guarded(true, [this](const auto&, auto& res) { get_tasks(res); }));
  s.Get("/v1/workers", guarded(true, [this](const auto&, auto& res) { get_workers(res); }));
  s.Get("/metrics", guarded(true, [this](const auto&, auto& res) { get_metrics(res); }));
  s.Get("/healthz", guarded(false, [this](const auto&, auto& res) { get_health(res); }));
  // Answers httplib makes itself (unknown route, body over the limit) get a JSON error too.
  s.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a route's own error
    if (res.status == 413) {
      send_error(res, 413, "the request body is over the " + std::to_string(config_.max_request_bytes) +
                               "-byte limit (serve --max-request-mb); send fewer jobs per request");
    } else if (res.status == 404) {
      send_error(res, 404, "no route " + req.method + " " + req.path);
    } else {
      send_error(res, res.status, "HTTP " + std::to_string(res.status));
    }
  });
  s.set_logger([this](const httplib::Request&, const httplib::Response& res) { http_.count(res.status); });
}

void Front::post_evaluations(const httplib::Request& req, httplib::Response& res) {
  const nlohmann::json body = parse_body(req.body);  // a parse error or a deep body is a 400 in guarded()
  const bool is_batch = body.is_object() && body.contains("jobs");
  std::vector<nlohmann::json> requested;
  if (is_batch) {
    for (const auto& [key, value] : body.items()) {
      if (key != "jobs") return send_error(res, 400, key + ": unknown field; a batch is {\"jobs\": [job, ...]}");
    }
    if (!body["jobs"].is_array() || body["jobs"].empty()) {
      return send_error(res, 400, "jobs: must be a non-empty list of job objects");
    }
    if (body["jobs"].size() > config_.max_batch_jobs) {
      return send_error(res, 413, "jobs: " + std::to_string(body["jobs"].size()) + " jobs, over the limit of " +
                                      std::to_string(config_.max_batch_jobs) + " per request (serve --max-batch)");
    }
    requested.assign(body["jobs"].begin(), body["jobs"].end());
  } else {
    requested.push_back(body);
  }
  JobLimits limits = config_.job_limits;  // tasks as text: from every token, or from those marked for it
  limits.allow_task_source = limits.allow_task_source || auth_.may_send_tasks(req.get_header_value("Authorization"));
  std::vector<JobSpec> jobs;
  for (std::size_t i = 0; i < requested.size(); ++i) {
    auto parsed = parse_job_request(requested[i], is_batch ? "jobs[" + std::to_string(i) + "]" : "job", task_sets_,
                                    limits);
    if (auto* e = std::get_if<RequestError>(&parsed)) return send_error(res, e->http_status, e->message);
    jobs.push_back(std::move(std::get<JobSpec>(parsed)));
  }
  if (static_cast<long long>(jobs.size()) > config_.max_queue) {  // would wait for room forever
    return send_error(res, 413, "jobs: " + std::to_string(jobs.size()) + " jobs, more than the queue ever holds (" +
                                    std::to_string(config_.max_queue) + ", serve --max-queue); send them in parts");
  }
  auto c = pool_.lease();
  if (!c) return send_redis_down(res, c.error().message);
  auto depth = queue_.depth(**c);
  if (!depth) return send_redis_down(res, depth.error().message);
  if (*depth + static_cast<long long>(jobs.size()) > config_.max_queue) {
    res.set_header("Retry-After", std::to_string(config_.retry_after_s));
    return send_error(res, 429, "the queue holds " + std::to_string(*depth) + " jobs and its bound is " +
                                    std::to_string(config_.max_queue) + " (serve --max-queue); " +
                                    std::to_string(jobs.size()) + " more do not fit; retry after " +
                                    std::to_string(config_.retry_after_s) + " s");
  }
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < jobs.size(); ++i) ids.push_back(random_id("j-"));
  const std::string batch = is_batch ? random_id("b-") : "";
  auto submitted = queue_.submit(**c, jobs, ids, batch, config_.result_ttl_s, auth_.scope(req.get_header_value("Authorization")));
  if (!submitted) return send_redis_down(res, submitted.error().message);
  if (submitted->conflict) {
    const std::size_t i = *submitted->conflict;
    return send_error(res, 409, (is_batch ? "jobs[" + std::to_string(i) + "]" : std::string("job")) + ".client_id: '" +
                                    jobs[i].client_id + "' names a job of other content; an idempotency key is for "
                                    "resending the same job (nothing of this request was enqueued)");
  }
  if (!is_batch) {
    return send_json(res, 202, {{"id", submitted->jobs[0].first}, {"existing", submitted->jobs[0].second}});
  }
  nlohmann::json out_ids = nlohmann::json::array();
  int n_existing = 0;
  for (const auto& [id, existing] : submitted->jobs) {
    out_ids.push_back(id);
    n_existing += existing;
  }
  send_json(res, 202, {{"batch", batch}, {"ids", out_ids}, {"n_existing", n_existing}});
}

namespace {

// wait_s from the query: 0 when absent, at most max_wait_s (a longer wait is capped, as the docs
// say); an Error names the parameter.
common::Expected<double> wait_param(const httplib::Request& req, double max_wait_s) {
  if (!req.has_param("wait_s")) return 0.0;
  const std::string text = req.get_param_value("wait_s");
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0) || !std::isfinite(v)) {
    return common::make_error("wait_s: '" + text + "' is not a number of seconds (0 or more; waits are capped at " +
                              nlohmann::json(max_wait_s).dump() + ", serve --max-wait-s)");
  }
  return std::min(v, max_wait_s);
}

}  // namespace

void Front::wait_for(double wait_s, const std::function<bool()>& done) {
  const auto deadline =
      clock_type::now() + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(wait_s));
  std::uint64_t seen;
  {
    std::lock_guard<std::mutex> lock(done_mutex_);
    seen = done_generation_;
  }
  while (!done()) {
    const auto now = clock_type::now();
    if (now >= deadline || stopping_) return;
    std::unique_lock<std::mutex> lock(done_mutex_);
    done_cv_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(250)),
                        [&] { return done_generation_ != seen || stopping_.load(); });
    seen = done_generation_;
  }
}

bool Front::wait_request(const httplib::Request& req, httplib::Response& res, const std::string& kind, double& wait_s) {
  auto w = wait_param(req, config_.max_wait_s);
  if (!w) {
    send_error(res, 400, w.error().message);
    return false;
  }
  wait_s = *w;
  const std::string id = req.matches[1];
  if (!valid_id(id)) {
    send_error(res, 404, kind + " '" + id.substr(0, 80) + "' is unknown");
    return false;
  }
  return true;
}

template <class T, class Fetch, class Done>
common::Expected<std::optional<T>> Front::poll(double wait_s, Fetch fetch, Done done) {
  common::Expected<std::optional<T>> last = std::optional<T>{};
  wait_for(wait_s, [&] {
    last = fetch();
    return !last || !*last || done(**last);
  });
  return last;
}

void Front::get_evaluation(const httplib::Request& req, httplib::Response& res) {
  double wait_s = 0;
  if (!wait_request(req, res, "job", wait_s)) return;
  const std::string id = req.matches[1];
  auto c = pool_.lease();
  if (!c) return send_redis_down(res, c.error().message);
  auto view = poll<JobView>(wait_s, [&] { return queue_.get(**c, id); }, [](const JobView& v) { return v.state == "done"; });
  if (!view) return send_redis_down(res, view.error().message);
  if (!*view) {
    return send_error(res, 404, "job '" + id + "' is unknown (or its result expired: serve --result-ttl-s " +
                                    std::to_string(config_.result_ttl_s) + ")");
  }
  send_json(res, 200, view_json(**view));
}

void Front::get_batch(const httplib::Request& req, httplib::Response& res) {
  double wait_s = 0;
  if (!wait_request(req, res, "batch", wait_s)) return;
  const std::string batch = req.matches[1];
  auto c = pool_.lease();
  if (!c) return send_redis_down(res, c.error().message);
  using Progress = std::pair<long long, long long>;  // n_jobs, n_done
  auto progress = poll<Progress>(wait_s, [&] { return queue_.batch_progress(**c, batch); },
                                 [](const Progress& p) { return p.second >= p.first; });
  if (!progress) return send_redis_down(res, progress.error().message);
  if (!*progress) return send_error(res, 404, "batch '" + batch + "' is unknown (or expired)");
  auto jobs = queue_.batch_jobs(**c, batch);
  if (!jobs) return send_redis_down(res, jobs.error().message);
  nlohmann::json list = nlohmann::json::array();
  long long n_done = 0;
  for (const auto& v : *jobs) {
    n_done += v.state == "done";
    list.push_back(view_json(v));
  }
  send_json(res, 200, {{"batch", batch}, {"n_jobs", jobs->size()}, {"n_done", n_done},
                       {"done", n_done == static_cast<long long>(jobs->size())}, {"jobs", std::move(list)}});
}

void Front::get_tasks(httplib::Response& res) {
  auto listing = task_sets_.listing();
  if (!listing) return send_error(res, 500, listing.error().message);
  send_json(res, 200, *listing);
}

std::optional<nlohmann::json> Front::workers_or_503(httplib::Response& res) {
  auto c = pool_.lease();
  if (!c) {
    send_redis_down(res, c.error().message);
    return std::nullopt;
  }
  auto workers = queue_.workers(**c, static_cast<long long>(config_.worker_alive_s * 1000));
  if (!workers) {
    send_redis_down(res, workers.error().message);
    return std::nullopt;
  }
  return *workers;
}

void Front::get_workers(httplib::Response& res) {
  if (auto workers = workers_or_503(res)) send_json(res, 200, {{"workers", *workers}});
}

void Front::get_health(httplib::Response& res) {
  auto workers = workers_or_503(res);
  if (!workers) return;
  nlohmann::json devices = nlohmann::json::array();
  int alive = 0;
  for (const auto& w : *workers) {
    if (!w.value("alive", false)) continue;
    ++alive;
    const std::string d = w.value("device", std::string());
    if (!d.empty() && std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
  }
  send_json(res, 200, {{"status", "ok"}, {"redis", url_.text}, {"workers_alive", alive}, {"devices", devices}});
}

void Front::get_metrics(httplib::Response& res) {
  auto c = pool_.lease();
  if (!c) return send_redis_down(res, c.error().message);
  auto stats = queue_.stats(**c, static_cast<long long>(config_.worker_alive_s * 1000));
  if (!stats) return send_redis_down(res, stats.error().message);
  res.status = 200;
  res.set_content(render_metrics(*stats, http_), "text/plain; version=0.0.4");
}

void Front::listen_for_results() {
  RedisSubscriber sub(url_, queue_.done_channel());
  while (!stopping_) {
    auto message = sub.next(500);
    if (!message) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // Redis away: waiters poll meanwhile
      continue;
    }
    if (!*message) continue;
    {
      std::lock_guard<std::mutex> lock(done_mutex_);
      ++done_generation_;
    }
    done_cv_.notify_all();
  }
}

common::Fallible Front::start() {
  const auto colon = config_.listen.rfind(':');
  const std::string host = colon == std::string::npos ? config_.listen : config_.listen.substr(0, colon);
  const std::string port_text = colon == std::string::npos ? "" : config_.listen.substr(colon + 1);
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (host.empty() || port_text.empty() || *end != '\0' || port < 0 || port > 65535) {
    return common::make_error("--listen: '" + config_.listen + "' is not HOST:PORT (e.g. 0.0.0.0:8080)");
  }
  server_ = std::make_unique<httplib::Server>();
  const int n_threads = std::max(4, config_.http_threads);
  server_->new_task_queue = [n_threads] { return new httplib::ThreadPool(static_cast<std::size_t>(n_threads)); };
  server_->set_payload_max_length(config_.max_request_bytes);
  server_->set_read_timeout(std::chrono::seconds(30));
  server_->set_write_timeout(std::chrono::seconds(30));
  install_routes();
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ <= 0) return common::make_error("--listen: cannot bind " + config_.listen);
  } else {
    if (!server_->bind_to_port(host, static_cast<int>(port))) {
      return common::make_error("--listen: cannot bind " + config_.listen + " (in use, or not an address of this host)");
    }
    port_ = static_cast<int>(port);
  }
  subscriber_thread_ = std::thread([this] { listen_for_results(); });
  server_thread_ = std::thread([this] { server_->listen_after_bind(); });
  return common::Ok{};
}

void Front::stop() {
  if (stopping_.exchange(true)) return;
  done_cv_.notify_all();
  if (server_) server_->stop();
  if (server_thread_.joinable()) server_thread_.join();
  if (subscriber_thread_.joinable()) subscriber_thread_.join();
}

}  // namespace kernelrl::service
