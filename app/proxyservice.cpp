#include "proxyservice.h"

#include "proxy/proxyserver.h"

using loopscope::ProxyServer;

ProxyService::ProxyService(QObject *parent)
    : QObject(parent) {
    m_thread.setObjectName(QStringLiteral("loopscope-proxy"));
    connect(&m_thread, &QThread::finished, this, &ProxyService::stopped);
}

ProxyService::~ProxyService() {
    if (m_thread.isRunning()) {
        QMetaObject::invokeMethod(
            m_anchor,
            [this] {
                delete m_server;
                m_server = nullptr;
            },
            Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
    delete m_anchor;
}

bool ProxyService::start(const loopscope::ProxyConfig &config, QString *error) {
    m_anchor = new QObject;
    m_anchor->moveToThread(&m_thread);
    m_thread.start();
    bool ok = false;
    QMetaObject::invokeMethod(
        m_anchor,
        [this, &config, &ok, error] {
            m_server = new ProxyServer(config);
            // Issue 5 hook: register the agentic-loop interceptor here, e.g.
            // m_server->addInterceptor(loop) with `loop` created in this thread.
            ok = m_server->listen();
            if (!ok) {
                if (error)
                    *error = m_server->errorString();
                delete m_server;
                m_server = nullptr;
                return;
            }
            m_url = m_server->listenUrl();
            connect(m_server, &ProxyServer::requestLogged, this, &ProxyService::requestLogged);
            connect(m_server, &ProxyServer::stopped, m_anchor, [this] {
                m_server->deleteLater();
                m_server = nullptr;
                m_thread.quit();
            });
        },
        Qt::BlockingQueuedConnection);
    if (!ok) {
        m_thread.quit();
        m_thread.wait();
    }
    return ok;
}

void ProxyService::stop() {
    if (m_stopping || !m_thread.isRunning())
        return;
    m_stopping = true;
    QMetaObject::invokeMethod(m_anchor, [this] {
        if (m_server)
            m_server->shutdown();
        else
            m_thread.quit();
    });
}
