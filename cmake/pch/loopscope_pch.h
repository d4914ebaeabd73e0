// The Qt Core headers most of the tree includes, precompiled once
// (cmake/LoopscopePrecompiled.cmake). Only Qt Core, and nothing whose meaning depends on a module
// macro: GCC refuses a precompiled header built with macros the user lacks, and Qt Core's are the
// ones every target has.
#pragma once

#include <QByteArray>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFuture>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QRegularExpression>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QThread>
#include <QTimer>
#include <QUrl>
