# nginx from Debian (nginx-light: the core modules an ingress needs), logging to the container's
# stdout/stderr.
FROM msp-base/debian:bookworm
RUN apt-get update && apt-get install -y nginx-light && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && rm -f /etc/nginx/sites-enabled/default \
 && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 8080
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
