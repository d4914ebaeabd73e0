#pragma once

// The production loop driver with stand-ins only for what lives off this machine: a real
// ProxyServer on loopback with the AgenticLoopInterceptor the proxy registers (so every request
// runs loop/AgenticLoop), a ScriptedUpstream as the model, and the caller's
// CodeInterpreterInterception (usually over a RecordingSandboxBackend). Used by tests/loop and
// by the conformance cases that are about the driver (follow-up, post hook, cleanup).

#include "loop/agenticloopinterceptor.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"

#include <QJsonDocument>
#include <QTest>

#include <memory>

namespace loopscope::test {

class LoopDriver {
public:
    explicit LoopDriver(CodeInterpreterInterception *interception, int maxLoops = 0) {
        if (!upstream.listen())
            qFatal("LoopDriver: the scripted upstream cannot listen");
        ProxyConfig config;
        config.port = 0;
        if (maxLoops > 0)
            config.maxLoopsOverride = maxLoops;
        QString error;
        config.defaultRoute = ProxyConfig::routeForUpstream(upstream.baseUrl(), &error);
        if (!config.defaultRoute)
            qFatal("LoopDriver: %s", qPrintable(error));
        server = std::make_unique<ProxyServer>(config);
        interceptor =
            std::make_unique<AgenticLoopInterceptor>(interception, server->upstream(), nullptr);
        server->addInterceptor(interceptor.get());
        if (!server->listen())
            qFatal("LoopDriver: the proxy cannot listen");
    }
    ~LoopDriver() {
        server.reset(); // the interceptor must outlive the server
        interceptor.reset();
    }

    // Starts a request; the caller reads or closes the client.
    std::unique_ptr<RawHttpClient> start(const QByteArray &path, const QJsonObject &body,
                                         const QByteArray &auth = "Bearer sk-loop-driver-0001") {
        auto client = std::make_unique<RawHttpClient>(server->port());
        client->request("POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact),
                        {{"authorization", auth}, {"content-type", "application/json"}});
        return client;
    }
    // One whole request; an empty response (status 0) when none came within a minute.
    RawHttpClient::Response post(const QByteArray &path, const QJsonObject &body,
                                 const QByteArray &auth = "Bearer sk-loop-driver-0001") {
        const auto client = start(path, body, auth);
        if (!QTest::qWaitFor([&] { return client->hasCompleteResponse(); }, 60000))
            return {};
        return client->take();
    }
    // Whether no loop is running any more (its cleanup has run).
    bool idle(int timeoutMs = 20000) {
        return QTest::qWaitFor([this] { return interceptor->activeLoops() == 0; }, timeoutMs);
    }

    ScriptedUpstream upstream;
    std::unique_ptr<ProxyServer> server;
    std::unique_ptr<AgenticLoopInterceptor> interceptor;
};

} // namespace loopscope::test
