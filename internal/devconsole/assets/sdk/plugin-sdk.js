// plugin-sdk.js, protocol version 1: window.fundament for plugin console
// pages, as the Fundament console serves it at /plugins/sdk/v1/. This is the
// development console's implementation of the host contract: the
// init handshake, the token and its refresh, fetch with a timeout, the
// Kubernetes helpers and the sheet messages.
//
// A classic script (not a module), so pages can rely on window.fundament
// existing before their own modules run.
(function () {
  'use strict';

  var PROTOCOL_VERSION = 1;
  var FETCH_TIMEOUT_MS = 30000;
  var REFRESH_TIMEOUT_MS = 10000;

  var token = null;
  var context = null;
  var resolveInit;
  var themeListeners = [];
  var changeListeners = [];
  var refreshWaiters = [];

  function SdkError(code, message, status) {
    var err = new Error(message);
    err.name = 'SdkError';
    err.code = code;
    if (status !== undefined) err.status = status;
    return err;
  }

  // send posts to the console; only after init is its origin known.
  function send(type, payload) {
    if (!fundament.parentOrigin) throw SdkError('transport', 'the console has not initialised this page yet');
    window.parent.postMessage(Object.assign({ type: type }, payload || {}), fundament.parentOrigin);
  }

  function subscribe(list, cb) {
    list.push(cb);
    return function unsubscribe() {
      var i = list.indexOf(cb);
      if (i >= 0) list.splice(i, 1);
    };
  }

  function onMessage(event) {
    if (event.source !== window.parent) return;
    var data = event.data;
    if (!data || typeof data.type !== 'string' || data.type.indexOf('fundament:') !== 0) return;
    if (data.type === 'fundament:init') return handleInit(event, data);
    // After init, only the pinned console origin is listened to.
    if (event.origin !== fundament.parentOrigin) return;
    switch (data.type) {
      case 'fundament:theme-changed':
        if (context) context.theme = data.theme;
        themeListeners.slice().forEach(function (cb) { cb(data.theme); });
        break;
      case 'fundament:token-refreshed':
        token = data.token;
        refreshWaiters.splice(0).forEach(function (w) { w.resolve(token); });
        break;
      case 'fundament:auth-failed':
        token = null;
        refreshWaiters.splice(0).forEach(function (w) { w.reject(SdkError('unauthorized', data.reason || 'authentication failed')); });
        break;
      case 'fundament:resources-changed':
        changeListeners.slice().forEach(function (cb) { cb(); });
        break;
      default:
        break;
    }
  }

  function handleInit(event, data) {
    if (data.protocolVersion !== PROTOCOL_VERSION) return;
    if (fundament.parentOrigin && event.origin !== fundament.parentOrigin) return;
    fundament.parentOrigin = event.origin;
    token = data.token;
    context = {
      theme: data.theme === 'dark' ? 'dark' : 'light',
      pluginName: data.pluginName,
      crdKind: data.crdKind,
      view: data.view,
      resource: data.resource,
      namespaces: data.namespaces,
      kubeApiProxyUrl: data.kubeApiProxyUrl,
      clusterId: data.clusterId,
      params: data.params,
    };
    resolveInit(context);
    startResizeReports();
  }

  // The console sizes the iframe from the document's height.
  function startResizeReports() {
    var last = -1;
    var report = function () {
      var height = Math.ceil(document.documentElement.scrollHeight);
      if (height !== last) {
        last = height;
        send('plugin:resize', { height: height });
      }
    };
    if (window.ResizeObserver) new ResizeObserver(report).observe(document.documentElement);
    report();
  }

  function refreshToken() {
    return new Promise(function (resolve, reject) {
      var waiter = { resolve: resolve, reject: reject };
      refreshWaiters.push(waiter);
      setTimeout(function () {
        var i = refreshWaiters.indexOf(waiter);
        if (i >= 0) {
          refreshWaiters.splice(i, 1);
          reject(SdkError('timeout', 'the console did not refresh the token in time'));
        }
      }, REFRESH_TIMEOUT_MS);
      send('plugin:request-token-refresh');
    });
  }

  function fetchOnce(input, init) {
    var controller = new AbortController();
    var timer = setTimeout(function () { controller.abort(); }, FETCH_TIMEOUT_MS);
    var headers = new Headers((init && init.headers) || {});
    headers.set('Authorization', 'Bearer ' + token);
    var options = Object.assign({}, init || {}, { headers: headers, signal: controller.signal, credentials: 'omit' });
    return fetch(input, options).then(function (response) {
      clearTimeout(timer);
      return response;
    }, function (err) {
      clearTimeout(timer);
      if (err && err.name === 'AbortError') throw SdkError('timeout', 'the request took longer than 30 s');
      throw SdkError('transport', (err && err.message) || 'the request failed');
    });
  }

  // sdkFetch adds the token, times out after 30 s and, on a 401, asks the
  // console for a fresh token and tries once more.
  function sdkFetch(input, init) {
    return fundament.init.then(function () {
      return fetchOnce(input, init);
    }).then(function (response) {
      if (response.status !== 401) return response;
      return refreshToken().then(function () { return fetchOnce(input, init); });
    });
  }

  function resourceUrl(args) {
    if (!context) throw SdkError('transport', 'the console has not initialised this page yet');
    if (!args || !args.version || !args.resource) throw SdkError('transport', 'a request needs version and resource');
    var url = context.kubeApiProxyUrl.replace(/\/+$/, '') + '/clusters/' + encodeURIComponent(context.clusterId);
    url += args.group ? '/apis/' + encodeURIComponent(args.group) + '/' + encodeURIComponent(args.version) : '/api/' + encodeURIComponent(args.version);
    if (args.namespace) url += '/namespaces/' + encodeURIComponent(args.namespace);
    url += '/' + encodeURIComponent(args.resource);
    if (args.name) url += '/' + encodeURIComponent(args.name);
    return url;
  }

  // errorFrom turns a failed response into an SdkError carrying the
  // Kubernetes Status message, so validation errors reach forms verbatim.
  function errorFrom(response) {
    return response.text().then(function (body) {
      var message = '';
      try {
        var status = JSON.parse(body);
        if (status && typeof status.message === 'string') message = status.message;
      } catch (e) {
        message = body;
      }
      message = message || response.status + ' ' + response.statusText;
      var code = response.status === 401 ? 'unauthorized' : response.status === 403 ? 'forbidden' : 'http';
      throw SdkError(code, message, response.status);
    });
  }

  function request(method, args, body, contentType) {
    var init = { method: method, headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      init.headers['Content-Type'] = contentType;
      init.body = JSON.stringify(body);
    }
    return fundament.init.then(function () {
      return sdkFetch(resourceUrl(args), init);
    }).then(function (response) {
      if (!response.ok) return errorFrom(response);
      if (method !== 'GET') notifyWrite();
      return response.status === 204 ? {} : response.json();
    });
  }

  // A successful write tells the console, which tells the page under a sheet
  // to list again.
  function notifyWrite() {
    try { send('plugin:resources-changed'); } catch (e) { /* not initialised: nothing to tell */ }
  }

  var fundament = {
    protocolVersion: PROTOCOL_VERSION,
    parentOrigin: null,
    init: new Promise(function (resolve) { resolveInit = resolve; }),
    getToken: function () { return fundament.init.then(function () { return token; }); },
    fetch: sdkFetch,
    k8s: {
      list: function (args) { return request('GET', Object.assign({}, args, { name: undefined })); },
      get: function (args) { return request('GET', args); },
      create: function (args, body) { return request('POST', Object.assign({}, args, { name: undefined }), body, 'application/json'); },
      patch: function (args, body) { return request('PATCH', args, body, 'application/merge-patch+json'); },
      delete: function (args) { return request('DELETE', args); },
    },
    onThemeChange: function (cb) { return subscribe(themeListeners, cb); },
    onResourcesChanged: function (cb) { return subscribe(changeListeners, cb); },
    openSheet: function (req) {
      send('plugin:open-sheet', { kind: req.kind, view: req.view, name: req.name, namespace: req.namespace, params: req.params });
    },
    closeSheet: function () { send('plugin:close-sheet'); },
  };

  window.addEventListener('message', onMessage);
  window.fundament = fundament;
  window.parent.postMessage({ type: 'plugin:ready' }, '*');
})();
