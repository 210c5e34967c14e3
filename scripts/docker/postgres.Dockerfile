# PostgreSQL 15 from Debian, started the way the compose file expects: POSTGRES_USER /
# POSTGRES_PASSWORD / POSTGRES_DB initialise an empty data directory on first start.
FROM msp-base/debian:bookworm
RUN apt-get update && apt-get install -y postgresql-15 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && rm -rf /var/lib/postgresql/15 /etc/postgresql/15/main \
 && mkdir -p /var/lib/postgresql/data /run/postgresql && chown -R postgres:postgres /var/lib/postgresql /run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
CMD ["postgres"]
