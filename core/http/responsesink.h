#pragma once

#include "http/httprequest.h"
#include "inspect/inspectorevent.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QStringList>

#include <functional>
#include <vector>

class QTcpSocket;

namespace loopscope {

class EventBus;

// Where one HTTP response goes. The server creates one sink per request and hands it to the
// handler (the pass-through code, or a RequestInterceptor in issue 5). A handler answers either
// once (send/sendJson/sendError) or as a stream (beginStream/beginSse, write..., endStream).
//
// Lifetime and threads: the sink is owned by its connection and lives in the proxy thread; it
// may be destroyed when the client disconnects, so asynchronous handlers must keep a
// QPointer<ResponseSink> and check it (and isClientGone()) before each write. Writing after the
// client went away is a harmless no-op.
//
// Timing: x-loopscope-overhead-ms (added to every response's headers) is the time since the
// request was fully received minus the time reported through addExternalTime (upstream and
// sandbox time), so it measures Loopscope itself, like LiteLLM's x-litellm-overhead-duration-ms.
class ResponseSink : public QObject {
    Q_OBJECT
public:
    ResponseSink(QTcpSocket *socket, const HttpRequest &request, bool keepAlive,
                 QObject *parent = nullptr);

    // One-shot answers. Content-Length, Connection and the overhead header are added here;
    // never pass them (or Transfer-Encoding) in `headers`.
    void send(int status, const HttpHeaders &headers, const QByteArray &body);
    void sendJson(int status, const QJsonObject &body, const HttpHeaders &extraHeaders = {});
    // An error in the client's dialect: OpenAI's {"error":{"message","type","param","code"}},
    // or on the Messages surface (/v1/messages…) Anthropic's {"type":"error","error":{…}}
    // with the type its status has there.
    void sendError(int status, const QString &message, const QString &type,
                   const QString &code = {}, const QString &param = {});

    // Streaming answers: chunked transfer encoding (close-delimited for HTTP/1.0 clients);
    // every write goes to the socket immediately.
    void beginStream(int status, const HttpHeaders &headers);
    // text/event-stream with cache-control: no-cache.
    void beginSse(int status = 200, const HttpHeaders &extraHeaders = {});
    void writeChunk(const QByteArray &bytes);
    // "event: <name>\ndata: <compact json>\n\n"; without a name only the data line is written
    // (Chat Completions style).
    void writeSseEvent(const QByteArray &eventName, const QJsonObject &data);
    // "data: <payload>\n\n", e.g. writeSseData("[DONE]").
    void writeSseData(const QByteArray &payload);
    void endStream();
    // Cuts the connection (e.g. the upstream stream broke): the client sees an incomplete
    // response instead of a clean end.
    void abortConnection();

    bool isStarted() const { return m_started; }
    bool isFinished() const { return m_finished; }
    bool isClientGone() const { return m_clientGone; }
    // Whether the connection stays open after this response (false for HTTP/1.0 streams).
    bool keepAlive() const { return m_keepAlive; }
    int status() const { return m_status; }
    qint64 bytesSent() const { return m_bytesSent; }
    // Bytes written but not yet taken by the kernel: lets a fast producer back off.
    qint64 bytesPending() const;

    // Time spent outside Loopscope (waiting for upstream, running sandbox code).
    void addExternalTime(qint64 nanoseconds) { m_externalNs += nanoseconds; }
    qint64 externalNanoseconds() const { return m_externalNs; }
    qint64 elapsedNanoseconds() const { return m_received.nsecsElapsed(); }
    double overheadMs() const;

    // Headers the access policy adds to every response (CORS, Vary). Access-Control-* headers a
    // handler passes (e.g. relayed from an upstream) are dropped, so the policy's answer wins.
    void setAccessHeaders(const HttpHeaders &headers) { m_accessHeaders = headers; }

    // Shown in the per-request log line; handlers fill what they know.
    void setLogModel(const QString &model) { m_logModel = model; }
    QString logModel() const { return m_logModel; }
    void setRequestId(const QString &id) { m_requestId = id; }
    QString requestId() const { return m_requestId; }
    void setIterations(int iterations) { m_iterations = iterations; }
    int iterations() const { return m_iterations; }

    // Flow recording (issue 11): once set, the answer is published on `bus` under requestId()
    // as ClientResponse, ClientResponseChunk… and ExchangeFinished events (headers masked with
    // the bus's CredentialPolicy). Publishing shares the bytes; nothing is parsed here.
    void setEventBus(EventBus *bus);
    // An event of this flow built and published later, off the client's wait: the client's
    // request once it has gone upstream, the upstream's answer once it has been relayed. Held
    // events are published in order before any event the sink publishes itself (so a flow's
    // events keep their order), or by publishHeld(); at once when the sink is finished.
    void holdEvent(std::function<InspectorEvent()> build);
    void publishHeld();
    // From now on the sink's events are built and published on the bus's own thread
    // (EventBus::publishDeferred; in order, and before anything published after them): the
    // pass-through, whose client waits on this thread for nothing else.
    void deferEvents() { m_deferEvents = true; }
    // Time from the request's arrival to the response head, 0 before it.
    double ttfbMs() const { return double(m_ttfbNs) / 1e6; }

    // Called by the connection.
    void markClientGone();

signals:
    // The client disconnected before the response was complete: stop work, abort upstream.
    void clientGone();
    // The response is complete (or can never complete because the client went away).
    void finished();

private:
    void writeHead(int status, const HttpHeaders &headers, qint64 contentLength, bool stream);
    void write(const QByteArray &bytes);
    void finish();
    // Builds and publishes now, or hands the build to the bus's thread (deferEvents()).
    void publishBuilt(std::function<InspectorEvent()> build);

    QPointer<QTcpSocket> m_socket;
    QElapsedTimer m_received;
    qint64 m_externalNs = 0;
    bool m_keepAlive = true;
    bool m_head = false;
    int m_httpMinor = 1;
    bool m_anthropicErrors = false; // sendError speaks Anthropic's envelope (Messages paths)
    bool m_chunked = false;
    bool m_started = false;
    bool m_finished = false;
    bool m_clientGone = false;
    int m_status = 0;
    qint64 m_bytesSent = 0;
    HttpHeaders m_accessHeaders;
    QString m_logModel;
    QString m_requestId;
    int m_iterations = 0;
    EventBus *m_events = nullptr;
    std::vector<std::function<InspectorEvent()>> m_held;
    qint64 m_ttfbNs = 0;
    bool m_aborted = false;
    bool m_deferEvents = false;
};

} // namespace loopscope
