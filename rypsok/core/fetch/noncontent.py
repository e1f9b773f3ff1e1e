"""Pages that are not content: a bot challenge, a soft 404, a login or a consent wall
(issue 20).

:func:`classify` reads what the extractor kept of a page (its title and the Markdown of
its main content) and says which of the four it is, or ``None``. It knows such pages by
what they say, never by the site: the title, phrasings in several languages, the short
lines a page names itself with ("404", "Page not found"), the field labels a log-in form
leaves on lines of their own ("Password:"), and how little else the page says.

The rule:

1. Points per kind. The title, or a short line of the content, that *is* one of the
   kind's names (whole, or one part of "Page not found | Site"): 2. A phrase only such
   pages say ("Verify you are human"): 2. A phrase they often say and other pages
   sometimes do ("Forgot your password?"): 1. A field label on a line of its own: 1. A
   status that says the same (401 for a log-in; 403, 429 or 503 for a challenge): 1, to a
   kind that has a point already. Each phrase counts once, wherever it is.
2. The kind with the most points, if it has ``NEEDED``; a tie goes to the first of
   challenge, soft 404, login wall, consent wall. A soft 404 only on a 2xx page.
3. Content wins (``None``) when the page says enough of its own. Its own prose is what
   is outside the wall's lines: the lines with a phrase, a name or a label, and the list a
   wall's line leads in with a colon ("We use cookies and data to:"). Content wins when
   the own prose reaches ``OWN_PROSE_WINS``, or all the prose ``PROSE_WINS``; or, if the
   title does not name the kind, when the own prose reaches ``OWN_PROSE_FLOOR`` and is
   more than the wall's (a short real page with a banner on it).

Prose is counted in letters and digits (any script) outside link text, link targets and
markup; a wide (CJK) character counts two, as it says about as much as two Latin letters.
Only the first ``SCAN_CHARS`` characters of the content and ``TITLE_CHARS`` of the title
are read. Phrases are found with ``str.find`` on case-folded NFKC text; the few regular
expressions are linear (no nested repetition, no attempt that runs past the next one's
start) and names are matched on lines of ``NAME_CHARS`` at most.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from http import HTTPStatus
from typing import Final, Literal

__all__ = ["KINDS", "NonContent", "Signs", "classify", "read_signs"]

NonContent = Literal["challenge", "soft_404", "login_wall", "consent_wall"]
# Also the order that settles a tie: a challenge hides whatever else the page is.
KINDS: Final[tuple[NonContent, ...]] = ("challenge", "soft_404", "login_wall", "consent_wall")

# --------------------------------------------------------------------------- thresholds

# Characters of content read: a wall says what it is in its first lines, and 8,000 holds
# a whole one with its link targets. Past them a page is long, and content.
SCAN_CHARS: Final = 8000
# Characters of title read: a wall's title is a few words.
TITLE_CHARS: Final = 300
# A line that names the page ("Page not found", "Sign in") is short; a longer one is a
# sentence and counts by its phrases only.
NAME_CHARS: Final = 80
# Points a kind needs: a name or a strong phrase, or two weak signs.
NEEDED: Final = 2
# Prose characters (see the module's docstring) outside the wall's own lines from which
# the page is content: more than any wall, challenge or not-found page says beside its
# phrases (the longest, a consent wall, lists a few purposes of a line each).
OWN_PROSE_WINS: Final = 500
# A real paragraph: with this much prose of its own, more than the wall's lines hold, a
# short page that carries a banner is the page (a 400-character notice).
OWN_PROSE_FLOOR: Final = 150
# All the prose a wall could have: a consent wall that explains every purpose runs to
# some 2,000 characters in German. A longer page is content even if every line quotes one.
PROSE_WINS: Final = 2500

_NAME_POINTS: Final = 2
_STRONG_POINTS: Final = 2
_WEAK_POINTS: Final = 1
_LABEL_POINTS: Final = 1
_STATUS_POINTS: Final = 1
# Statuses that say the same as the page: a challenge's and a log-in's.
_STATUS_SAYS: Final[dict[int, NonContent]] = {
    HTTPStatus.UNAUTHORIZED: "login_wall",
    HTTPStatus.FORBIDDEN: "challenge",
    HTTPStatus.TOO_MANY_REQUESTS: "challenge",
    HTTPStatus.SERVICE_UNAVAILABLE: "challenge",
}
_OK_CLASS: Final = 2  # status // 100 of a page served as found


# --------------------------------------------------------------------------- the words


@dataclass(frozen=True, slots=True)
class _Words:
    """A kind's vocabulary, written in the page's spelling (folded when compiled).

    names: a whole title segment, or a whole short line, that is one of these names the
    page (2 points). strong: phrases only such a page says (2). weak: phrases such pages
    often say and others sometimes do (1). labels: a whole line that is a form field's
    label (1)."""

    names: tuple[str, ...]
    strong: tuple[str, ...]
    weak: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    name_patterns: tuple[str, ...] = ()  # regular expressions for names, on folded text


_CHALLENGE = _Words(
    names=(
        # en
        "just a moment",
        "one moment, please",
        "one moment please",
        "attention required",
        "security check",
        "security checkpoint",
        "checking your browser",
        "verify you are human",
        "human verification",
        "bot verification",
        "robot check",
        "are you a robot?",
        "are you human?",
        "access denied",
        "access to this page has been denied",
        "you have been blocked",
        "request blocked",
        "captcha",
        "ddos protection",
        # de, fr, es, pt, it, nl
        "nur einen moment",
        "einen moment bitte",
        "einen moment, bitte",
        "sicherheitsüberprüfung",
        "zugriff verweigert",
        "un instant",
        "vérification de sécurité",
        "accès refusé",
        "un momento",
        "un momento, por favor",
        "verificación de seguridad",
        "acceso denegado",
        "um momento",
        "só um momento",
        "verificação de segurança",
        "acesso negado",
        "solo un momento",
        "controllo di sicurezza",
        "accesso negato",
        "een ogenblik",
        "een moment geduld",
        "even geduld",
        "beveiligingscontrole",
        "toegang geweigerd",
        # ja, zh, ru
        "しばらくお待ちください",
        "アクセスが拒否されました",
        "セキュリティチェック",
        "请稍候",
        "请稍等",
        "安全检查",
        "访问被拒绝",
        "人机验证",
        "один момент",
        "подождите",
        "проверка безопасности",
        "доступ запрещен",
    ),
    strong=(
        # en
        "checking your browser",
        "checking if the site connection is secure",
        "verify you are human",
        "verifying you are human",
        "verify you are a human",
        "confirm you are a human",
        "confirm you are human",
        "prove you are human",
        "needs to review the security of your connection",
        "enable javascript and cookies to continue",
        "press & hold",
        "press and hold",
        "i'm not a robot",
        "i am not a robot",
        "unusual traffic",
        "this website is using a security service to protect itself",
        "you have been blocked",
        "complete the security check",
        "complete the captcha",
        "solve the captcha",
        "access to this page has been denied",
        # de
        "überprüfung ihres browsers",
        "ihr browser wird überprüft",
        "dass sie ein mensch sind",
        "dass sie kein roboter sind",
        "ich bin kein roboter",
        "ungewöhnlichen datenverkehr",
        "javascript und cookies",
        # fr
        "vérification de votre navigateur",
        "vérifiez que vous êtes humain",
        "vérifions que vous êtes humain",
        "confirmez que vous êtes humain",
        "je ne suis pas un robot",
        "trafic inhabituel",
        "activez javascript et les cookies",
        # es
        "comprobando su navegador",
        "verificando su navegador",
        "verifica que eres humano",
        "verifique que es humano",
        "confirma que eres humano",
        "no soy un robot",
        "tráfico inusual",
        "habilita javascript y las cookies",
        # pt
        "verificando seu navegador",
        "verificando o seu navegador",
        "verifique se você é humano",
        "confirme que você é humano",
        "não sou um robô",
        "tráfego incomum",
        "ative o javascript e os cookies",
        # it
        "controllo del browser",
        "verifica del browser",
        "verifica di essere umano",
        "conferma di essere umano",
        "non sono un robot",
        "traffico insolito",
        "abilita javascript e i cookie",
        # nl
        "uw browser wordt gecontroleerd",
        "je browser wordt gecontroleerd",
        "controleren of u een mens bent",
        "bevestig dat je een mens bent",
        "bevestig dat u een mens bent",
        "ik ben geen robot",
        "ongebruikelijk verkeer",
        "schakel javascript en cookies in",
        # ja
        "ブラウザを確認しています",
        "人間であることを確認",
        "ロボットではありません",
        "通常と異なるトラフィック",
        # zh
        "正在检查您的浏览器",
        "请验证您是真人",
        "确认您是真人",
        "我不是机器人",
        "异常流量",
        # ru
        "проверка браузера",
        "проверяем ваш браузер",
        "подтвердите, что вы человек",
        "я не робот",
        "необычный трафик",
    ),
    weak=(
        "ray id",
        "performance & security by",
        "reference id",
        "incident id",
        "may take a few seconds",
        "this process is automatic",
        "automated requests",
        "automated queries",
        "why am i seeing this",
        "why did this happen",
        "not a robot",
        "enable cookies",
        "kein roboter",
        "pas un robot",
        "no es un robot",
        "não é um robô",
        "nicht automatisiert",
        "автоматические запросы",
        "не робот",
        "人机验证",
    ),
)

_SOFT_404 = _Words(
    names=(
        # en
        "page not found",
        "not found",
        "file not found",
        "nothing found",
        "nothing here",
        "page cannot be found",
        "page can't be found",
        "that page can't be found",
        "this page can't be found",
        "page does not exist",
        "page doesn't exist",
        "this page does not exist",
        "this page doesn't exist",
        "we can't find that page",
        "we couldn't find that page",
        # de, fr, es, pt, it, nl
        "seite nicht gefunden",
        "seite wurde nicht gefunden",
        "die seite wurde nicht gefunden",
        "seite existiert nicht",
        "diese seite existiert nicht",
        "nicht gefunden",
        "page introuvable",
        "page non trouvée",
        "page inexistante",
        "cette page n'existe pas",
        "introuvable",
        "página no encontrada",
        "esta página no existe",
        "no encontrado",
        "página não encontrada",
        "esta página não existe",
        "não encontrado",
        "pagina non trovata",
        "questa pagina non esiste",
        "pagina inesistente",
        "non trovato",
        "pagina niet gevonden",
        "deze pagina bestaat niet",
        "pagina bestaat niet",
        "niet gevonden",
        # ja, zh, ru
        "ページが見つかりません",
        "ページが見つかりませんでした",
        "お探しのページが見つかりません",
        "お探しのページは見つかりませんでした",
        "ページが存在しません",
        "お探しのページは存在しません",
        "页面未找到",
        "页面不存在",
        "找不到页面",
        "找不到该页面",
        "您访问的页面不存在",
        "頁面不存在",
        "找不到網頁",
        "找不到頁面",
        "страница не найдена",
        "страница не существует",
        "такой страницы нет",
        "не найдено",
    ),
    strong=(
        # en
        "page not found",
        "that page can't be found",
        "the page you are looking for",
        "the page you're looking for",
        "the page you were looking for",
        "the page you requested does not exist",
        "the page you requested could not be found",
        "the requested page could not be found",
        "was not found on this server",
        "nothing was found at this location",
        "this page doesn't exist",
        "this page does not exist",
        "this page could not be found",
        "we can't find the page",
        "we couldn't find the page",
        "we can't find that page",
        "we couldn't find that page",
        # de
        "seite nicht gefunden",
        "seite wurde nicht gefunden",
        "seite existiert nicht",
        "die von ihnen aufgerufene seite",
        "die gesuchte seite",
        # fr
        "page introuvable",
        "page non trouvée",
        "la page que vous recherchez",
        "la page que vous cherchez",
        "cette page n'existe pas",
        "la page demandée n'existe pas",
        "la page demandée est introuvable",
        # es
        "página no encontrada",
        "la página que buscas",
        "la página que estás buscando",
        "la página que está buscando",
        "la página solicitada no existe",
        "esta página no existe",
        "no se ha encontrado la página",
        "no se encontró la página",
        # pt
        "página não encontrada",
        "a página que você procura",
        "a página que você está procurando",
        "a página que procura",
        "esta página não existe",
        "a página solicitada não existe",
        "a página não foi encontrada",
        # it
        "pagina non trovata",
        "la pagina che stai cercando",
        "la pagina che cerchi",
        "la pagina richiesta non esiste",
        "questa pagina non esiste",
        "la pagina non è stata trovata",
        # nl
        "pagina niet gevonden",
        "de pagina die je zoekt",
        "de pagina die u zoekt",
        "deze pagina bestaat niet",
        "de opgevraagde pagina",
        # ja
        "ページが見つかりません",
        "ページは見つかりません",
        "ページが存在しません",
        "ページは存在しません",
        # zh
        "页面未找到",
        "页面不存在",
        "找不到页面",
        "找不到该页面",
        "頁面不存在",
        "找不到網頁",
        "找不到頁面",
        # ru
        "страница не найдена",
        "страница не существует",
        "такой страницы не существует",
        "такой страницы нет",
    ),
    weak=(
        "could not be found",
        "cannot be found",
        "can't be found",
        "does not exist",
        "doesn't exist",
        "no longer exists",
        "may have been moved",
        "might have been removed",
        "has been moved or deleted",
        "broken link",
        "mistyped",
        "check the url",
        "check the address",
        "try a search",
        "back to the homepage",
        "return to the homepage",
        "go to the homepage",
        "error 404",
        "404 error",
        "konnte nicht gefunden werden",
        "existiert nicht mehr",
        "zur startseite",
        "fehler 404",
        "n'existe pas",
        "n'existe plus",
        "a été déplacée",
        "a été supprimée",
        "retour à l'accueil",
        "erreur 404",
        "ya no existe",
        "volver al inicio",
        "foi removida",
        "voltar para a página inicial",
        "erro 404",
        "è stata rimossa",
        "torna alla home",
        "errore 404",
        "niet meer beschikbaar",
        "terug naar de homepage",
        "fout 404",
        "お探しのページ",
        "移動または削除",
        "トップページへ戻る",
        "トップページに戻る",
        "返回首页",
        "返回首頁",
        "已被删除",
        "已被刪除",
        "была удалена",
        "вернуться на главную",
        "ошибка 404",
    ),
    # "404", "Error 404", "404 - Page not found", "Page not found (404)": see _CODE_404.
)

_LOGIN = _Words(
    names=(
        # en
        "sign in",
        "sign-in",
        "signin",
        "log in",
        "log-in",
        "login",
        "log on",
        "sign in to your account",
        "log in to your account",
        "login to your account",
        "sign in to continue",
        "log in to continue",
        "account login",
        "member login",
        "members login",
        "login required",
        "sign in required",
        "authentication required",
        "members only",
        "please log in",
        "please sign in",
        "log in to view this page",
        # de, fr, es, pt, it, nl
        "anmelden",
        "anmeldung",
        "einloggen",
        "login erforderlich",
        "bitte anmelden",
        "connexion",
        "se connecter",
        "identifiez-vous",
        "connectez-vous",
        "iniciar sesión",
        "inicia sesión",
        "inicio de sesión",
        "iniciar sessão",
        "entrar",
        "fazer login",
        "faça login",
        "accedi",
        "effettua l'accesso",
        "inloggen",
        "aanmelden",
        # ja, zh, ru
        "ログイン",
        "サインイン",
        "会員ログイン",
        "登录",
        "登入",
        "登錄",
        "用户登录",
        "会员登录",
        "请登录",
        "請登入",
        "вход",
        "войти",
        "вход в систему",
        "вход в аккаунт",
        "вход на сайт",
        "авторизация",
    ),
    strong=(
        # en
        "sign in to continue",
        "log in to continue",
        "login to continue",
        "sign in to view",
        "log in to view",
        "login to view",
        "sign in to read",
        "log in to read",
        "sign in to see",
        "log in to see",
        "please log in",
        "please sign in",
        "please login",
        "you must be logged in",
        "you need to be logged in",
        "you must log in",
        "you need to log in",
        "you must sign in",
        "you need to sign in",
        "must be signed in",
        "registered and logged in",
        "you are not logged in",
        "login required",
        "sign in required",
        "only available to members",
        # de
        "bitte melden sie sich an",
        "melden sie sich an, um",
        "sie müssen angemeldet sein",
        "sie müssen sich anmelden",
        "anmelden, um fortzufahren",
        "bitte loggen sie sich ein",
        "nur für mitglieder",
        "login erforderlich",
        "anmeldung erforderlich",
        # fr
        "connectez-vous pour continuer",
        "connectez-vous pour accéder",
        "veuillez vous connecter",
        "vous devez être connecté",
        "vous devez vous connecter",
        "identifiez-vous pour continuer",
        "réservé aux membres",
        # es
        "inicia sesión para continuar",
        "inicie sesión para continuar",
        "inicia sesión para ver",
        "debes iniciar sesión",
        "debe iniciar sesión",
        "tienes que iniciar sesión",
        "necesitas iniciar sesión",
        "por favor, inicia sesión",
        # pt
        "faça login para continuar",
        "faça login para ver",
        "entre para continuar",
        "você precisa estar logado",
        "você precisa fazer login",
        "você deve estar logado",
        "inicie sessão para continuar",
        "é necessário fazer login",
        # it
        "accedi per continuare",
        "accedi per visualizzare",
        "devi effettuare l'accesso",
        "devi accedere",
        "effettua l'accesso per continuare",
        # nl
        "log in om verder te gaan",
        "log in om door te gaan",
        "log in om deze pagina te bekijken",
        "je moet ingelogd zijn",
        "u moet ingelogd zijn",
        "je moet inloggen",
        "u moet inloggen",
        "meld je aan om verder te gaan",
        "alleen voor leden",
        # ja
        "ログインしてください",
        "ログインが必要です",
        "続行するにはログイン",
        "閲覧するにはログイン",
        "サインインしてください",
        # zh
        "请先登录",
        "登录后查看",
        "登录后才能",
        "需要登录",
        "請先登入",
        "登入後才能",
        # ru
        "войдите, чтобы",
        "пожалуйста, войдите",
        "необходимо войти",
        "необходимо авторизоваться",
        "требуется авторизация",
        "только для зарегистрированных",
    ),
    weak=(
        "forgot your password",
        "forgot password",
        "forgot my password",
        "don't have an account",
        "do not have an account",
        "create an account",
        "create account",
        "new here?",
        "not a member",
        "remember me",
        "keep me signed in",
        "stay signed in",
        "keep me logged in",
        "continue with google",
        "continue with apple",
        "sign in with google",
        "by signing in",
        "passwort vergessen",
        "kennwort vergessen",
        "konto erstellen",
        "noch kein konto",
        "angemeldet bleiben",
        "mot de passe oublié",
        "créer un compte",
        "pas encore de compte",
        "rester connecté",
        "se souvenir de moi",
        "olvidaste tu contraseña",
        "olvidó su contraseña",
        "crear una cuenta",
        "no tienes una cuenta",
        "recordarme",
        "esqueceu sua senha",
        "esqueceu a senha",
        "esqueceu a sua senha",
        "criar uma conta",
        "não tem uma conta",
        "lembrar de mim",
        "password dimenticata",
        "hai dimenticato la password",
        "crea un account",
        "non hai un account",
        "ricordami",
        "wachtwoord vergeten",
        "account aanmaken",
        "nog geen account",
        "ingelogd blijven",
        "パスワードをお忘れ",
        "アカウントを作成",
        "新規登録",
        "ログイン状態を保持",
        "忘记密码",
        "忘記密碼",
        "没有账号",
        "记住我",
        "забыли пароль",
        "создать аккаунт",
        "нет аккаунта",
        "запомнить меня",
    ),
    labels=(
        "username",
        "user name",
        "user",
        "email",
        "e-mail",
        "email address",
        "password",
        "benutzername",
        "passwort",
        "kennwort",
        "identifiant",
        "nom d'utilisateur",
        "mot de passe",
        "usuario",
        "nombre de usuario",
        "contraseña",
        "usuário",
        "nome de usuário",
        "senha",
        "nome utente",
        "gebruikersnaam",
        "wachtwoord",
        "ユーザー名",
        "パスワード",
        "メールアドレス",
        "用户名",
        "密码",
        "用戶名",
        "密碼",
        "логин",
        "имя пользователя",
        "пароль",
    ),
)

_CONSENT = _Words(
    names=(
        # en
        "before you continue",
        "cookie consent",
        "cookie settings",
        "cookie preferences",
        "privacy settings",
        "privacy preferences",
        "privacy choices",
        "your privacy",
        "your privacy choices",
        "we value your privacy",
        "consent",
        "manage consent",
        "your consent",
        # de, fr, es, pt, it, nl
        "zustimmung",
        "einwilligung",
        "datenschutzeinstellungen",
        "cookie-einstellungen",
        "ihre privatsphäre",
        "ihre privatsphäre ist uns wichtig",
        "bevor sie fortfahren",
        "consentement",
        "paramètres des cookies",
        "gestion des cookies",
        "avant de continuer",
        "votre vie privée",
        "nous respectons votre vie privée",
        "consentimiento",
        "configuración de cookies",
        "antes de continuar",
        "tu privacidad",
        "su privacidad",
        "valoramos tu privacidad",
        "consentimento",
        "configurações de cookies",
        "antes de prosseguir",
        "sua privacidade",
        "a sua privacidade",
        "valorizamos a sua privacidade",
        "consenso",
        "impostazioni dei cookie",
        "prima di continuare",
        "prima di procedere",
        "la tua privacy",
        "rispettiamo la tua privacy",
        "toestemming",
        "cookie-instellingen",
        "cookie instellingen",
        "voordat je verdergaat",
        "voordat u verdergaat",
        "je privacy",
        "uw privacy",
        # ja, zh, ru
        "プライバシー設定",
        "cookieの設定",
        "クッキーの設定",
        "同意",
        "隐私设置",
        "隱私設定",
        "cookie设置",
        "cookie 设置",
        "согласие",
        "настройки cookie",
        "настройки файлов cookie",
        "прежде чем продолжить",
        "ваша конфиденциальность",
        "мы ценим вашу конфиденциальность",
    ),
    strong=(
        # en
        "we value your privacy",
        "we care about your privacy",
        "your privacy is important to us",
        "accept all cookies",
        "reject all cookies",
        "allow all cookies",
        "store and/or access information on a device",
        "we and our partners",
        "we and our vendors",
        "you agree to our use of cookies",
        # de
        "wir schätzen ihre privatsphäre",
        "ihre privatsphäre ist uns wichtig",
        "wir und unsere partner",
        "alle cookies akzeptieren",
        "alle cookies ablehnen",
        # fr
        "nous respectons votre vie privée",
        "votre vie privée est importante",
        "nous et nos partenaires",
        "accepter tous les cookies",
        "refuser tous les cookies",
        # es
        "valoramos tu privacidad",
        "valoramos su privacidad",
        "nosotros y nuestros socios",
        "aceptar todas las cookies",
        "rechazar todas las cookies",
        # pt
        "valorizamos a sua privacidade",
        "valorizamos sua privacidade",
        "nós e os nossos parceiros",
        "nós e nossos parceiros",
        "aceitar todos os cookies",
        "rejeitar todos os cookies",
        # it
        "rispettiamo la tua privacy",
        "la tua privacy è importante",
        "noi e i nostri partner",
        "accetta tutti i cookie",
        "rifiuta tutti i cookie",
        # nl
        "wij waarderen uw privacy",
        "we respecteren je privacy",
        "wij en onze partners",
        "alle cookies accepteren",
        "alle cookies weigeren",
        # ja, zh, ru
        "すべてのcookieを受け入れる",
        "我们重视您的隐私",
        "我们和我们的合作伙伴",
        "мы ценим вашу конфиденциальность",
        "мы и наши партнеры",
        "принять все файлы cookie",
        "отклонить все файлы cookie",
    ),
    weak=(
        "before you continue",
        "accept all",
        "reject all",
        "decline all",
        "refuse all",
        "manage preferences",
        "manage your preferences",
        "manage options",
        "cookie settings",
        "cookie preferences",
        "privacy settings",
        "legitimate interest",
        "our partners",
        "personalised ads",
        "personalized ads",
        "personalised content",
        "personalized content",
        "use cookies",
        "uses cookies",
        "use of cookies",
        "cookies and similar technologies",
        "cookies and data",
        "withdraw your consent",
        "bevor sie fortfahren",
        "alle akzeptieren",
        "alle ablehnen",
        "akzeptieren und weiter",
        "einstellungen verwalten",
        "cookie-einstellungen",
        "datenschutzeinstellungen",
        "verwenden cookies",
        "verwendet cookies",
        "berechtigtes interesse",
        "berechtigten interesses",
        "unsere partner",
        "personalisierte anzeigen",
        "ihre zustimmung",
        "informationen auf ihrem gerät",
        "avant de continuer",
        "tout accepter",
        "tout refuser",
        "accepter et fermer",
        "continuer sans accepter",
        "paramètres des cookies",
        "gérer les préférences",
        "gérer mes préférences",
        "utilise des cookies",
        "utilisons des cookies",
        "intérêt légitime",
        "nos partenaires",
        "publicités personnalisées",
        "votre consentement",
        "antes de continuar",
        "aceptar todo",
        "rechazar todo",
        "utilizamos cookies",
        "usamos cookies",
        "utiliza cookies",
        "configuración de cookies",
        "interés legítimo",
        "nuestros socios",
        "anuncios personalizados",
        "tu consentimiento",
        "su consentimiento",
        "aceitar tudo",
        "rejeitar tudo",
        "usa cookies",
        "configurações de cookies",
        "definições de cookies",
        "interesse legítimo",
        "nossos parceiros",
        "anúncios personalizados",
        "seu consentimento",
        "prima di continuare",
        "accetta tutto",
        "rifiuta tutto",
        "utilizziamo i cookie",
        "utilizziamo cookie",
        "utilizza cookie",
        "utilizza i cookie",
        "impostazioni dei cookie",
        "legittimo interesse",
        "i nostri partner",
        "annunci personalizzati",
        "il tuo consenso",
        "alles accepteren",
        "alles weigeren",
        "accepteren en doorgaan",
        "gebruiken cookies",
        "gebruikt cookies",
        "cookie-instellingen",
        "gerechtvaardigd belang",
        "onze partners",
        "gepersonaliseerde advertenties",
        "je toestemming",
        "uw toestemming",
        "voorkeuren beheren",
        "すべて同意",
        "すべて拒否",
        "すべて受け入れる",
        "cookieを使用",
        "クッキーを使用",
        "プライバシー設定",
        "同意して続行",
        "パーソナライズされた広告",
        "全部接受",
        "全部拒绝",
        "接受所有",
        "拒绝所有",
        "使用cookie",
        "使用 cookie",
        "隐私设置",
        "同意并继续",
        "个性化广告",
        "принять все",
        "отклонить все",
        "используем файлы cookie",
        "использует файлы cookie",
        "настройки файлов cookie",
        "законный интерес",
        "наши партнеры",
        "персонализированной рекламы",
        "ваше согласие",
    ),
    # A consent page's title often names the site it stands before.
    name_patterns=(
        r"before you continue to .+",
        r"bevor sie zu .+ weitergehen",
        r"avant d'accéder à .+",
        r"antes de ir a .+",
        r"prima di continuare su .+",
        r"voordat je verdergaat naar .+",
    ),
)

_VOCABULARY: Final[dict[NonContent, _Words]] = {
    "challenge": _CHALLENGE,
    "soft_404": _SOFT_404,
    "login_wall": _LOGIN,
    "consent_wall": _CONSENT,
}


# --------------------------------------------------------------------------- folding

# Invisible characters a page may put inside a word ("Just\u200ba moment").
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
# One spelling for apostrophes, quotes and the Russian ё (often written е).
_SPELLING = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u02bc": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "ё": "е",
    }
)
_SPACES = re.compile(r"[^\S\n]+")


def _fold(text: str) -> str:
    """One spelling of a text for matching: NFKC (full-width letters, the ellipsis, the
    ligatures), Unicode case folding (ß is ss, as a phrase is folded the same way), one
    apostrophe, one space. Line breaks stay, so lines stay where they were."""
    text = _INVISIBLE.sub("", text)
    text = unicodedata.normalize("NFKC", text).casefold().translate(_SPELLING)
    return _SPACES.sub(" ", text)


# --------------------------------------------------------------------------- Markdown to text

# Linear on any line: the text stops at a bracket and the target (rypsok's, with spaces
# and parentheses escaped) at a space, a parenthesis or "[", so no attempt runs past where
# the next one starts. A target with "[" in it (an IPv6 host) is left as text.
_IMAGE = re.compile(r"!\[(?:\\.|[^\[\]\\\n])*\]\([^()\s\[]*\)")
_LINK = re.compile(r"\[((?:\\.|[^\[\]\\\n])*)\]\([^()\s\[]*\)")
_LINE_MARKS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t>]*|[-+*][ \t]+|\d{1,9}[.)][ \t]+)", re.M)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_MARKUP = re.compile(r"[*_|~`]+")


def _visible(markdown: str, *, links: bool) -> str:
    """The text a reader sees, line for line: link text kept (``links``) or dropped."""
    text = _IMAGE.sub("", markdown)
    text = _LINK.sub(r"\1" if links else "", text)
    text = _LINE_MARKS.sub("", text)
    text = _MARKUP.sub(" ", text)
    return _ESCAPE.sub(r"\1", text)


# CJK ideographs, kana and Hangul, their full-width forms: two Latin letters' worth each.
_WIDE = re.compile("[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uffdc]")


def _prose(line: str) -> int:
    return sum(map(str.isalnum, line)) + len(_WIDE.findall(line))


# --------------------------------------------------------------------------- compiled tables


def _spaced(ch: str) -> bool:
    """A letter of a script that puts spaces between words: a phrase written in one
    ends at a word's end ("sign in" is not in "design in")."""
    return ch.isalnum() and not _WIDE.match(ch)


@dataclass(frozen=True, slots=True)
class _Phrase:
    text: str
    kind: NonContent
    points: int
    left: bool  # the character before must not be a letter
    right: bool  # the character after must not be a letter


def _phrases() -> tuple[_Phrase, ...]:
    out: dict[tuple[str, NonContent], _Phrase] = {}
    for kind, words in _VOCABULARY.items():
        for group, points in ((words.strong, _STRONG_POINTS), (words.weak, _WEAK_POINTS)):
            for raw in group:
                text = _fold(raw)
                out.setdefault(
                    (text, kind),
                    _Phrase(text, kind, points, _spaced(text[0]), _spaced(text[-1])),
                )
    return tuple(out.values())


# Decorations around a name: "Oops! That page can't be found." is the name "that page
# can't be found"; "«Login»" is "login".
_DECORATION = " .,;:!?¡¿…-–—|·•*#\"'«»()[]{}<>。、"
_INTERJECTION = r"(?:(?:oops|whoops|sorry|uh oh|hoppla|ups|oups|oh non|vaya|ops|oeps|упс)[!.,]* )?"
# "404", "error 404", "HTTP 404", "404 error", in the languages of the names.
_CODE_404 = r"(?:(?:http|error|fehler|erreur|errore|erro|fout|ошибка) ?)?404(?: ?(?:error|fehler))?"
_JOIN = r" ?[-:–—.!|]? ?"


def _names_pattern(kind: NonContent, words: _Words) -> re.Pattern[str]:
    names = sorted({_fold(n) for n in words.names}, key=len, reverse=True)
    either = "|".join(re.escape(n) for n in names)
    parts = [rf"{_INTERJECTION}(?:{either})"]
    parts += [_fold(p) for p in words.name_patterns]
    if kind == "soft_404":
        parts.append(rf"{_INTERJECTION}{_CODE_404}(?:{_JOIN}(?:{either}))?")
        parts.append(rf"(?:{either}) ?\(?{_CODE_404}\)?")
    return re.compile("|".join(f"(?:{p})" for p in parts))


_PHRASES: Final = _phrases()
_NAMES: Final = {kind: _names_pattern(kind, w) for kind, w in _VOCABULARY.items()}
_LABELS: Final = {kind: frozenset(_fold(x) for x in w.labels) for kind, w in _VOCABULARY.items()}
# Where a title or a short line splits into its parts: "Page not found | Site",
# "404 — Page not found", "Error 404: not found" (NFKC has made "｜" and "：" ASCII).
_SEGMENTS = re.compile(r"[|·•»]|: ?| [-–—/]+ ")


def _names_in(text: str) -> set[NonContent]:
    """The kinds one of whose names the folded text is, whole or one of its parts; a
    part longer than ``NAME_CHARS`` is a sentence, and names nothing."""
    parts = [text, *_SEGMENTS.split(text)]
    kinds: set[NonContent] = set()
    for part in parts:
        part = part.strip(_DECORATION)
        if not part or len(part) > NAME_CHARS:
            continue
        kinds.update(kind for kind, names in _NAMES.items() if names.fullmatch(part))
    return kinds


# --------------------------------------------------------------------------- the rule


@dataclass(frozen=True, slots=True)
class Signs:
    """What :func:`classify` decides on: the points of each kind, the kinds the title
    names, and the page's prose (see the module's docstring) outside and inside the
    lines that carry a phrase, a name or a label."""

    points: dict[NonContent, int]
    titled: frozenset[NonContent]
    own_prose: int
    wall_prose: int

    def strongest(self) -> NonContent | None:
        """The kind with the most points, if it has enough; the first of equals wins."""
        best = max(KINDS, key=lambda kind: self.points[kind])
        return best if self.points[best] >= NEEDED else None

    def content_wins(self, kind: NonContent) -> bool:
        """Whether the page says enough of its own to be content, though it has the signs
        of ``kind``. A short page keeps the floor only if its title does not name it."""
        if self.own_prose >= OWN_PROSE_WINS or self.own_prose + self.wall_prose >= PROSE_WINS:
            return True
        return (
            kind not in self.titled
            and self.own_prose >= OWN_PROSE_FLOOR
            and self.own_prose > self.wall_prose
        )


def classify(title: str | None, content: str, *, status: int = HTTPStatus.OK) -> NonContent | None:
    """What kind of non-content the page is, or None when it is content (the rule is the
    module's docstring). ``title`` and ``content`` are the extracted title and Markdown;
    ``status`` the HTTP status the page came with."""
    signs = read_signs(title, content, status=status)
    kind = signs.strongest()
    return None if kind is None or signs.content_wins(kind) else kind


def read_signs(title: str | None, content: str, *, status: int = HTTPStatus.OK) -> Signs:
    """The points and the prose of a page, read from its title and at most the first
    ``SCAN_CHARS`` characters of its content."""
    window = content[:SCAN_CHARS]
    points = dict.fromkeys(KINDS, 0)
    titled = frozenset(_names_in(_fold((title or "")[:TITLE_CHARS])))
    for kind in titled:
        points[kind] += _NAME_POINTS

    # Three views of the window, line for line: the Markdown (for its lists), what is
    # searched for phrases (link text kept), and what names a page and counts as its
    # prose (links dropped: a row of links is navigation, not what the page says).
    marked = window.split("\n")
    said = _fold(_visible(window, links=True))
    said_lines = said.split("\n")
    own_lines = _visible(window, links=False).split("\n")
    wall_lines: set[int] = set()

    starts: list[int] = []
    at = 0
    for line in said_lines:
        starts.append(at)
        at += len(line) + 1
    for phrase in _PHRASES:
        hit = _find(said, phrase)
        if hit < 0:
            continue
        points[phrase.kind] += phrase.points
        while hit >= 0:
            wall_lines.add(bisect_right(starts, hit) - 1)
            hit = _find(said, phrase, hit + len(phrase.text))

    prose = [_prose(line) for line in own_lines]
    named: set[NonContent] = set()
    for i, line in enumerate(own_lines):
        if not prose[i]:
            continue
        folded = _fold(line).strip(_DECORATION)
        if len(folded) > NAME_CHARS:
            continue
        kinds = _names_in(folded)
        named |= kinds
        for kind, labels in _LABELS.items():
            if folded in labels:
                points[kind] += _LABEL_POINTS
                kinds.add(kind)
        if kinds:
            wall_lines.add(i)
    for kind in named:
        points[kind] += _NAME_POINTS
    _lists_follow(marked, said_lines, wall_lines)

    says = _STATUS_SAYS.get(status)
    if says is not None and points[says]:
        points[says] += _STATUS_POINTS
    if status // 100 != _OK_CLASS:
        points["soft_404"] = 0  # a not-found status is a plain 404: the status says so
    wall = sum(prose[i] for i in wall_lines)
    return Signs(points, titled, sum(prose) - wall, wall)


_LIST_ITEM = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]")


def _lists_follow(marked: list[str], said: list[str], wall: set[int]) -> None:
    """A list that a wall's line leads in ("We use cookies and data to:") is the wall's
    too: its items are the purposes, the steps or the links it names."""
    for i in sorted(wall):
        if not said[i].rstrip().endswith(":"):
            continue
        j = i + 1
        while j < len(marked) and not marked[j].strip():
            j += 1
        while j < len(marked) and _LIST_ITEM.match(marked[j]):
            wall.add(j)
            j += 1


def _find(text: str, phrase: _Phrase, start: int = 0) -> int:
    """The next place the phrase stands as words of its own, or -1."""
    p = phrase.text
    i = text.find(p, start)
    while i >= 0:
        before_ok = not phrase.left or i == 0 or not text[i - 1].isalnum()
        end = i + len(p)
        after_ok = not phrase.right or end == len(text) or not text[end].isalnum()
        if before_ok and after_ok:
            return i
        i = text.find(p, i + 1)
    return -1
