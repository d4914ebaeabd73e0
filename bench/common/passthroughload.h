#pragma once

// Pass-through load for the benchmark harnesses: keep-alive connections that send one request
// over and over, a phase runner that reports latency percentiles (bench_proxy, bench_record),
// and a paced runner that holds a request rate for a while (bench_record --sustained).

#include <QByteArray>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QObject>
#include <QTcpSocket>
#include <QTimer>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

namespace loopscope::bench {

// One keep-alive connection sending the same request over and over.
class LoadConnection : public QObject {
public:
    LoadConnection(quint16 port, QByteArray request, bool streaming, std::vector<qint64> *samples,
                   int *remaining, std::function<void()> onConnected, std::function<void()> onIdle)
        : m_request(std::move(request))
        , m_streaming(streaming)
        , m_samples(samples)
        , m_remaining(remaining)
        , m_onIdle(std::move(onIdle)) {
        m_socket.setSocketOption(QAbstractSocket::LowDelayOption, 1);
        connect(&m_socket, &QTcpSocket::connected, this, std::move(onConnected));
        connect(&m_socket, &QTcpSocket::readyRead, this, [this] { onData(); });
        m_socket.connectToHost(QHostAddress::LocalHost, port);
    }
    // Called once every connection is up, so connection set-up is not measured.
    void start() { next(); }

private:
    void next() {
        if (*m_remaining <= 0) {
            m_onIdle();
            return;
        }
        --*m_remaining;
        m_buffer.clear();
        m_firstSeen = false;
        m_clock.start();
        m_socket.write(m_request);
    }
    void onData() {
        m_buffer += m_socket.readAll();
        const qsizetype headEnd = m_buffer.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return;
        if (m_streaming && !m_firstSeen && m_buffer.indexOf("data:", headEnd) > 0) {
            m_firstSeen = true;
            m_samples->push_back(m_clock.nsecsElapsed());
        }
        bool complete = false;
        const qsizetype lengthAt = m_buffer.toLower().indexOf("content-length:");
        if (lengthAt >= 0 && lengthAt < headEnd) {
            const qsizetype lineEnd = m_buffer.indexOf("\r\n", lengthAt);
            const qsizetype length =
                m_buffer.mid(lengthAt + 15, lineEnd - lengthAt - 15).trimmed().toLongLong();
            complete = m_buffer.size() >= headEnd + 4 + length;
        } else {
            complete = m_buffer.endsWith("0\r\n\r\n");
        }
        if (!complete)
            return;
        if (!m_streaming)
            m_samples->push_back(m_clock.nsecsElapsed());
        next();
    }

    QTcpSocket m_socket;
    QByteArray m_request;
    bool m_streaming;
    std::vector<qint64> *m_samples;
    int *m_remaining;
    std::function<void()> m_onIdle;
    QByteArray m_buffer;
    QElapsedTimer m_clock;
    bool m_firstSeen = false;
};

struct PhaseResult {
    std::vector<qint64> samples; // ns
    double seconds = 0;
    double percentile(double p) const {
        if (samples.empty())
            return 0;
        std::vector<qint64> sorted = samples;
        std::sort(sorted.begin(), sorted.end());
        const size_t index = std::min(sorted.size() - 1, size_t(p * double(sorted.size())));
        return double(sorted[index]) / 1e6;
    }
    double rps() const { return seconds > 0 ? double(samples.size()) / seconds : 0; }
};

inline PhaseResult runPhase(quint16 port, const QByteArray &request, bool streaming,
                            int concurrency, int requests) {
    PhaseResult result;
    result.samples.reserve(size_t(requests));
    int remaining = requests;
    int idle = 0;
    int connected = 0;
    QEventLoop loop;
    std::vector<std::unique_ptr<LoadConnection>> connections;
    for (int i = 0; i < concurrency; ++i)
        connections.push_back(std::make_unique<LoadConnection>(
            port, request, streaming, &result.samples, &remaining,
            [&] {
                if (++connected == concurrency)
                    loop.quit();
            },
            [&] {
                if (++idle == concurrency)
                    loop.quit();
            }));
    loop.exec(); // all connected
    QElapsedTimer wall;
    wall.start();
    for (auto &c : connections)
        c->start();
    loop.exec(); // all done
    result.seconds = double(wall.nsecsElapsed()) / 1e9;
    return result;
}

// Holds `rate` requests/s for `seconds` (open loop: a request is due at its time whether or not
// the proxy kept up; due requests wait for a free connection, counted as backlog). `requests`
// alternate over the connections (e.g. JSON and SSE). `onSecond(second, completed, backlog)` is
// called once a second while the load runs. Returns when every due request has completed.
struct PacedRequest {
    QByteArray bytes;
    bool streaming = false;
};
struct PacedResult {
    PhaseResult phase;     // latency samples of every request and the wall time
    qint64 issued = 0;     // requests sent
    qint64 maxBacklog = 0; // the most requests ever due and waiting for a connection
};

inline PacedResult runPacedPhase(quint16 port, const QList<PacedRequest> &requests, int concurrency,
                                 int rate, int seconds,
                                 const std::function<void(int, qint64, qint64)> &onSecond) {
    PacedResult result;
    // Sized and touched up front, so the latency buffer does not show up as RSS growth.
    result.phase.samples.resize(size_t(rate) * size_t(seconds) + 16);
    result.phase.samples.clear();
    int due = 0; // granted, not yet taken by a connection
    qint64 granted = 0;
    int connected = 0;
    std::vector<LoadConnection *> idle;
    QEventLoop loop;
    std::vector<std::unique_ptr<LoadConnection>> connections;
    for (int i = 0; i < concurrency; ++i) {
        const PacedRequest &r = requests.at(i % requests.size());
        connections.push_back(std::make_unique<LoadConnection>(
            port, r.bytes, r.streaming, &result.phase.samples, &due,
            [&] {
                if (++connected == concurrency)
                    loop.quit();
            },
            [&, i] { idle.push_back(connections[size_t(i)].get()); }));
    }
    loop.exec(); // all connected
    QElapsedTimer wall;
    wall.start();
    const qint64 total = qint64(rate) * seconds;
    QTimer pace;
    pace.setTimerType(Qt::PreciseTimer);
    QObject::connect(&pace, &QTimer::timeout, &loop, [&] {
        const qint64 target = std::min(total, qint64(double(wall.nsecsElapsed()) / 1e9 * rate));
        due += int(target - granted);
        granted = target;
        result.maxBacklog = std::max<qint64>(result.maxBacklog, due);
        while (due > 0 && !idle.empty()) {
            LoadConnection *c = idle.back();
            idle.pop_back();
            c->start();
        }
        if (granted == total && due == 0 && int(idle.size()) == concurrency) {
            pace.stop();
            loop.quit();
        }
    });
    QTimer tick;
    int second = 0;
    QObject::connect(&tick, &QTimer::timeout, &loop,
                     [&] { onSecond(++second, qint64(result.phase.samples.size()), due); });
    for (auto &c : connections)
        idle.push_back(c.get());
    pace.start(2);
    tick.start(1000);
    loop.exec();
    result.phase.seconds = double(wall.nsecsElapsed()) / 1e9;
    result.issued = granted;
    return result;
}

inline QByteArray httpRequest(quint16 port, const QByteArray &body) {
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(port) +
           "\r\nAuthorization: Bearer sk-bench-0000\r\nContent-Type: application/json\r\n"
           "Content-Length: " +
           QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

} // namespace loopscope::bench
